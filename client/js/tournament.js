// A tournament's page (/tournaments/{id}): its standings, crosstable and rounds (an arena's:
// the time left, its games in the order paired, who is on a streak), from
// GET /api/tournaments/{id} and /api/tournaments/{id}/crosstable, asked again every second
// while it is not finished. Read only.
import { h, clear } from "./dom.js";
import { gameTitle, seatName } from "./notation.js";
import { t as tr, tParts, tWord, has, onLanguageChange } from "./i18n.js";
import { clockLabel } from "./meet.js";
import { timeLeft } from "./tourneys.js";

const $ = (id) => document.getElementById(id);
const tournamentId = decodeURIComponent(location.pathname.replace(/\/+$/, "").split("/").pop() || "");
const EVERY_MS = 1000;
let creator = null;  // the creator's name, read once from their player page

/** A player's name, linking to their page; a program marked as one (once: a house bot's
 * name already says "bot"). A house bot entered (player id bot:GAME:LEVEL) is named in the
 * page's language. */
function playerLink(id, name, bot) {
  const shown = seatName({ kind: id.startsWith("bot:") ? "bot" : "human", name });
  const link = h("a", { class: "pname", href: `../players/${encodeURIComponent(id)}` }, shown);
  if (!bot || /^bot \(/.test(name)) return link;
  return h("span", {}, link, " ", h("span", { class: "tag bot", title: tr("tpage.botAccount") }, tr("common.bot")));
}

function points(x) {
  return Number.isInteger(x) ? String(x) : `${Math.floor(x) || ""}½`;
}

function resultText(g, names) {
  if (g.players[1] === null) return tr("tpage.bye");
  if (!g.result) return tr("tpage.playing");
  if (g.result.winner === null) return g.result.reason === "aborted" ? tr("tpage.aborted") : tr("tpage.draw");
  return tr("tpage.won", { name: names[g.players[g.result.winner]] });
}

let onShow = null;  // the tournament on show, drawn again after a switch of language

function render(t) {
  onShow = t;
  const shown = (s) => seatName({ kind: s.player_id.startsWith("bot:") ? "bot" : "human", name: s.name });
  const names = Object.fromEntries(t.standings.map((s) => [s.player_id, shown(s)]));
  const format = tWord("tourney.format", t.format);
  document.title = tr("tpage.docTitle", { format, game: gameTitle(t.game) });
  // A tournament has no name of its own: its format, game and clock name it.
  $("to-title").textContent = `${format} · ${gameTitle(t.game)} · ${clockLabel(t.clock)}`;
  if (t.created_by && creator === null) {
    creator = "";
    fetch(new URL(`../api/players/${encodeURIComponent(t.created_by)}`, location.href))
      .then((r) => (r.ok ? r.json() : null)).then((p) => { if (p) { creator = p.name; render(t); } })
      .catch(() => {});
  }
  const by = $("to-creator");
  clear(by);
  if (creator) by.append(...tParts("tpage.createdBy", { name: playerLink(t.created_by, creator, false) }));
  const arena = t.format === "arena";
  const status = t.status === "waiting" ? tr("tpage.waiting", { count: t.standings.length })
    : arena && t.status === "playing"
      ? tr("tpage.arenaLeft", { left: timeLeft(t.ends_at_ms - Date.now()), count: t.round })
      : arena ? tr("tpage.arenaFinished", { count: t.round })
        : t.status === "playing" ? tr("tourney.roundOf", { round: t.round, rounds: t.rounds })
          : tr("tpage.finished", { count: t.rounds });
  $("to-status").textContent = `${status} · ${t.rated ? tr("meet.rated") : tr("meet.casual")}`;
  $("to-status").dataset.status = t.status;
  const tb = has(`tpage.tiebreak.${t.format}`) ? t.format : "other";
  $("to-tiebreak").textContent = tr(`tpage.tiebreak.${tb}`);
  $("to-tiebreak").title = tr(`tpage.tiebreakLong.${tb}`);
  const rows = clear($("to-rows"));
  for (const s of t.standings) {
    rows.append(h("tr", { "data-player": s.player_id, "data-streak": s.streak ? "1" : null,
      class: s.active === false ? "muted" : null },
      h("td", {}, String(s.rank)),
      h("td", { class: "to-name" }, playerLink(s.player_id, s.name, s.bot),
        s.streak ? h("span", { class: "to-streak", title: tr("tpage.streak") }, " 🔥") : "",
        s.active === false ? h("span", { class: "small" }, ` (${tr("tpage.left")})`) : ""),
      h("td", { class: "to-points" }, points(s.points)),
      h("td", {}, arena ? String(s.games) : points(s.tiebreak)),
      h("td", {}, String(s.wins)), h("td", {}, String(s.draws)), h("td", {}, String(s.losses))));
  }
  const rounds = clear($("to-rounds"));
  $("to-games-title").textContent = arena ? tr("tpage.games") : tr("tpage.rounds");
  if (arena) {
    renderArenaGames(rounds, t, names);
    $("to-no-rounds").hidden = true;
    return;
  }
  t.pairings.forEach((games, i) => {
    const list = h("ul", { class: "room-items" });
    for (const g of games) {
      const who = g.players[1] === null ? tr("tpage.sitsOut", { name: names[g.players[0]] })
        : tr("tpage.pair", { a: names[g.players[0]], b: names[g.players[1]] });
      const link = g.room_id === null ? "" : g.result
        ? h("a", { class: "btn small", href: `../review/${encodeURIComponent(g.room_id)}` }, tr("common.review"))
        : h("a", { class: "btn primary small", href: `../#/watch/${encodeURIComponent(g.room_id)}` }, tr("common.watch"));
      list.append(h("li", { class: "room-item to-game", "data-room": g.room_id || "" },
        h("span", { class: "room-info" }, h("span", { class: "players" }, who)),
        h("span", { class: "small" }, resultText(g, names)),
        h("span", { class: "room-actions" }, link)));
    }
    rounds.append(h("section", { class: "to-round", "data-round": String(i + 1) },
      h("h3", {}, tr("tpage.round", { n: i + 1 })), list));
  });
  $("to-no-rounds").hidden = t.pairings.length > 0;
}

function cell(scores) {
  return scores.map((s) => (s === null ? "*" : points(s))).join(" ");
}

function renderCross(c) {
  const head = clear($("to-cross-head"));
  head.append(h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, tr("common.player")));
  c.entrants.forEach((e) => head.append(h("th", { scope: "col", title: e.name }, String(e.rank))));
  head.append(h("th", { scope: "col" }, tr("tpage.points")));
  const rows = clear($("to-cross-rows"));
  for (const e of c.entrants) {
    rows.append(h("tr", { "data-player": e.player_id },
      h("td", {}, String(e.rank)),
      h("td", { class: "to-name" }, playerLink(e.player_id, e.name, e.bot)),
      ...c.entrants.map((o) => h("td", { class: o.player_id === e.player_id ? "to-self" : "to-cell",
        "data-against": o.player_id }, o.player_id === e.player_id ? "×" : cell(e.results[o.player_id] || []))),
      h("td", { class: "to-points" }, points(e.points))));
  }
}

function gameItem(g, names) {
  const who = g.players[1] === null ? tr("tpage.sitsOut", { name: names[g.players[0]] })
    : tr("tpage.pair", { a: names[g.players[0]], b: names[g.players[1]] });
  const link = g.room_id === null ? "" : g.result
    ? h("a", { class: "btn small", href: `../review/${encodeURIComponent(g.room_id)}` }, tr("common.review"))
    : h("a", { class: "btn primary small", href: `../#/watch/${encodeURIComponent(g.room_id)}` }, tr("common.watch"));
  const berserk = (g.berserk || []).map((b, i) => (b ? names[g.players[i]] : null)).filter(Boolean);
  return h("li", { class: "room-item to-game", "data-room": g.room_id || "",
    "data-playing": g.result ? null : "1" },
  h("span", { class: "room-info" }, h("span", { class: "players" }, who)),
  h("span", { class: "small" }, resultText(g, names),
    berserk.length ? ` · ${tr("tpage.berserkBy", { names: berserk.join(", ") })}` : ""),
  h("span", { class: "room-actions" }, link));
}

// An arena's games: those being played first (who plays whom now), then the rest, latest
// first.
function renderArenaGames(box, t, names) {
  const playing = t.pairings.filter((g) => !g.result);
  const done = t.pairings.filter((g) => g.result).reverse();
  box.append(h("section", { class: "to-round", id: "to-now" },
    h("h3", {}, tr("tpage.playingNow", { count: playing.length })),
    h("ul", { class: "room-items" }, playing.map((g) => gameItem(g, names)))));
  box.append(h("section", { class: "to-round", id: "to-done" },
    h("h3", {}, tr("tpage.played", { count: done.length })),
    h("ul", { class: "room-items" }, done.map((g) => gameItem(g, names)))));
}

async function look() {
  const base = `../api/tournaments/${encodeURIComponent(tournamentId)}`;
  const r = await fetch(new URL(base, location.href));
  const t = await r.json();
  if (!r.ok) {
    $("to-title").textContent = r.status === 404 ? tr("tpage.none") : tr("common.httpError", { status: r.status });
    return;
  }
  render(t);
  $("to-csv").href = `${base}/crosstable?format=csv`;
  const x = await fetch(new URL(`${base}/crosstable?format=json`, location.href));
  if (x.ok) renderCross(await x.json());
  if (t.status !== "finished") setTimeout(() => look().catch(retry), EVERY_MS);
}

function retry() {
  setTimeout(() => look().catch(retry), EVERY_MS * 3);
}

onLanguageChange(() => { if (onShow) render(onShow); });
look().catch(retry);
