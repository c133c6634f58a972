// The leaderboard (/leaderboard): a game's rated players, best first, from
// GET /api/leaderboard?game=G; each links to the player's page. Read only: no WebSocket.
import { h, clear } from "./dom.js";
import { gameTitle, seatName } from "./notation.js";
import { serverGames } from "./net.js";
import { t, onLanguageChange } from "./i18n.js";

const $ = (id) => document.getElementById(id);

async function show(game) {
  $("lb-status").hidden = false;
  $("lb-status").textContent = t("common.loading");
  const r = await fetch(`api/leaderboard?game=${encodeURIComponent(game)}`);
  const body = await r.json();
  if (!r.ok) {
    $("lb-status").textContent = t("common.httpError", { status: r.status });
    $("lb-table").hidden = true;
    return;
  }
  const rows = clear($("lb-rows"));
  body.players.forEach((p, i) => {
    rows.append(h("tr", { "data-player": p.player_id },
      h("td", {}, String(i + 1)),
      h("td", {}, h("a", { href: `players/${encodeURIComponent(p.player_id)}`, class: p.bot ? "pname bot" : "pname" }, seatName({ kind: p.player_id.startsWith("bot:") ? "bot" : "human", name: p.name }) || p.player_id),
        p.bot ? h("span", { class: "tag bot" }, ` ${t("common.bot")}`) : ""),
      h("td", { class: "lb-rating" }, String(Math.round(p.rating))),
      h("td", {}, String(Math.round(p.rd))),
      h("td", {}, String(p.games))));
  });
  $("lb-table").hidden = !body.players.length;
  $("lb-status").hidden = !!body.players.length;
  $("lb-status").textContent = body.players.length ? "" : t("lb.none", { game: gameTitle(game) });
}

async function main() {
  const picker = $("lb-game");
  const info = await serverGames();
  // The page's own names of the games (the server's titles are English).
  const options = info.games.map((g) => h("option", { value: g.game }, gameTitle(g.game)));
  picker.append(...options);
  onLanguageChange(() => {
    for (const o of options) o.textContent = gameTitle(o.value);
    show(picker.value);
  });
  const wanted = new URLSearchParams(location.search).get("game");
  if (wanted && info.games.some((g) => g.game === wanted)) picker.value = wanted;
  picker.addEventListener("change", () => {
    history.replaceState(null, "", `?game=${encodeURIComponent(picker.value)}`);
    show(picker.value);
  });
  await show(picker.value);
}

main().catch((e) => { $("lb-status").textContent = t("lb.failed", { why: e.message || String(e) }); });
