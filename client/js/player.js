// A player's page (/players/{player_id}): their ratings per game and their latest games,
// each linking to its review, from GET /api/players/{id}. Read only: no WebSocket.
import { h, clear } from "./dom.js";
import { gameTitle, reasonText, seatName } from "./notation.js";
import { ratingGraph } from "./rating-graph.js";
import { t, fmtDate, tWord, onLanguageChange } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const playerId = decodeURIComponent(location.pathname.replace(/\/+$/, "").split("/").pop() || "");

function resultFor(g) {
  if (!g.result) return tWord("status", g.status);
  const mine = g.seats.findIndex((s) => s.player_id === playerId);
  const why = reasonText(g.result.reason);
  if (g.result.reason === "aborted") return t("player.aborted");
  if (g.result.winner === null || g.result.winner === undefined) return t("player.drew", { why });
  return t(g.result.winner === mine ? "player.won" : "player.lost", { why });
}

/** The day a game was played, in the page's language. */
function dayOf(g) {
  if (!g.created_at) return "";
  return fmtDate(g.created_at * 1000);
}

async function main() {
  const r = await fetch(new URL(`../api/players/${encodeURIComponent(playerId)}`, location.href));
  const p = await r.json();
  if (!r.ok) {
    $("pl-name").textContent = r.status === 404 ? t("player.none") : t("common.httpError", { status: r.status });
    return;
  }
  const name = seatName({ kind: playerId.startsWith("bot:") ? "bot" : "human", name: p.name });
  document.title = t("player.docTitle", { name });
  $("pl-name").textContent = name;
  const level = playerId.startsWith("bot:");
  $("pl-kind").textContent = level ? t("player.houseBot")
    : p.bot ? t("player.botAccount") : (p.registered ? t("player.registered") : t("player.guest"));
  $("pl-kind").classList.toggle("is-bot", !!p.bot);
  const ratings = Object.entries(p.ratings);
  const rows = clear($("pl-rating-rows"));
  for (const [game, x] of ratings) {
    rows.append(h("tr", { "data-game": game },
      h("td", {}, h("a", { href: `../leaderboard?game=${encodeURIComponent(game)}` }, gameTitle(game))),
      h("td", { class: "pl-rating" }, String(Math.round(x.rating))),
      h("td", {}, String(Math.round(x.rd))),
      h("td", {}, String(x.games))));
  }
  $("pl-ratings").hidden = !ratings.length;
  $("pl-no-ratings").hidden = !!ratings.length;
  const list = clear($("pl-games"));
  for (const g of p.games) {
    const names = g.seats.map((s) => (s.bot ? t("player.seatBot", { name: seatName(s) || t("common.openSeat") })
      : seatName(s) || t("common.openSeat"))).join(` ${t("common.vs")} `);
    const link = g.status === "finished"
      ? h("a", { class: "btn primary small review-link", href: `../review/${encodeURIComponent(g.room_id)}` }, t("common.review"))
      : h("a", { class: "btn small", href: `../#/watch/${encodeURIComponent(g.room_id)}` }, t("common.watch"));
    list.append(h("li", { class: "room-item pl-game", "data-room": g.room_id },
      h("span", { class: "room-info" },
        // An aborted game changed no rating: no "rated" tag on it.
        h("span", { class: "room-game" }, gameTitle(g.game),
          g.rated && !(g.result && g.result.reason === "aborted") ? h("span", { class: "tag rated" }, ` ${t("common.ratedTag")}`) : ""),
        h("span", { class: "pl-players" }, names),
        h("span", { class: "small muted pl-result" }, resultFor(g),
          h("time", { class: "pl-date", datetime: g.created_at ? new Date(g.created_at * 1000).toISOString() : null }, ` · ${dayOf(g)}`))),
      h("span", { class: "room-actions" }, link)));
  }
  $("pl-no-games").hidden = !!p.games.length;
  await histories(ratings.map(([game]) => game));
}

/** Each rated game's rating history as a graph, beside the player's wins, draws and losses. */
async function histories(games) {
  const box = clear($("pl-history"));
  for (const game of games) {
    const r = await fetch(new URL(`../api/players/${encodeURIComponent(playerId)}/history?game=${encodeURIComponent(game)}`, location.href));
    if (!r.ok) continue;
    const hist = await r.json();
    box.append(h("div", { class: "pl-hist", "data-game": game },
      h("h3", {}, gameTitle(game)),
      h("p", { class: "pl-wdl small", "aria-label": t("player.wdlLabel", { w: hist.wins, d: hist.draws, l: hist.losses }) },
        h("span", { class: "w" }, t("player.w", { n: hist.wins })), " · ", h("span", { class: "d" }, t("player.d", { n: hist.draws })), " · ",
        h("span", { class: "l" }, t("player.l", { n: hist.losses }))),
      ratingGraph(hist.points, t("room.ratingTitle", { game: gameTitle(game) }))));
  }
  $("pl-history-panel").hidden = !box.children.length;
}

onLanguageChange(() => main().catch(() => {}));
main().catch((e) => { $("pl-name").textContent = t("player.failed", { why: e.message || String(e) }); });
