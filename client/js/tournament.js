// A tournament's page (/tournaments/{id}): its standings, crosstable and rounds, from
// GET /api/tournaments/{id} and /api/tournaments/{id}/crosstable, asked again every second
// while it is not finished. Read only.
import { h, clear } from "./dom.js";
import { gameTitle } from "./notation.js";

const $ = (id) => document.getElementById(id);
const tournamentId = decodeURIComponent(location.pathname.replace(/\/+$/, "").split("/").pop() || "");
const EVERY_MS = 1000;
const FORMATS = { round_robin: "Round robin", swiss: "Swiss" };
const TIEBREAKS = { round_robin: ["SB", "Sonneborn–Berger"], swiss: ["Buchholz", "Buchholz"] };

function points(x) {
  return Number.isInteger(x) ? String(x) : `${Math.floor(x) || ""}½`;
}

function resultText(g, names) {
  if (g.players[1] === null) return "bye";
  if (!g.result) return "playing";
  if (g.result.winner === null) return g.result.reason === "aborted" ? "aborted" : "draw";
  return `${names[g.players[g.result.winner]]} won`;
}

function render(t) {
  const names = Object.fromEntries(t.standings.map((s) => [s.player_id, s.name]));
  document.title = `${FORMATS[t.format] || t.format} of ${gameTitle(t.game)} · Tablas`;
  $("to-title").textContent = `${FORMATS[t.format] || t.format} · ${gameTitle(t.game)}`;
  const status = t.status === "waiting" ? `waiting for its start · ${t.standings.length} entered`
    : t.status === "playing" ? `round ${t.round} of ${t.rounds}` : `finished after ${t.rounds} rounds`;
  $("to-status").textContent = `${status} · ${t.rated ? "rated" : "casual"}`;
  $("to-status").dataset.status = t.status;
  const [short, long] = TIEBREAKS[t.format] || ["TB", "tie-break"];
  $("to-tiebreak").textContent = short;
  $("to-tiebreak").title = long;
  const rows = clear($("to-rows"));
  for (const s of t.standings) {
    rows.append(h("tr", { "data-player": s.player_id },
      h("td", {}, String(s.rank)),
      h("td", { class: "to-name" }, s.bot ? `${s.name} (bot)` : s.name),
      h("td", { class: "to-points" }, points(s.points)),
      h("td", {}, points(s.tiebreak)),
      h("td", {}, String(s.wins)), h("td", {}, String(s.draws)), h("td", {}, String(s.losses))));
  }
  const rounds = clear($("to-rounds"));
  t.pairings.forEach((games, i) => {
    const list = h("ul", { class: "room-items" });
    for (const g of games) {
      const who = g.players[1] === null ? `${names[g.players[0]]} sits out`
        : `${names[g.players[0]]} vs ${names[g.players[1]]}`;
      const link = g.room_id === null ? "" : g.result
        ? h("a", { class: "btn small", href: `../review/${encodeURIComponent(g.room_id)}` }, "Review")
        : h("a", { class: "btn primary small", href: `../#/watch/${encodeURIComponent(g.room_id)}` }, "Watch");
      list.append(h("li", { class: "room-item to-game", "data-room": g.room_id || "" },
        h("span", { class: "room-info" }, h("span", { class: "players" }, who)),
        h("span", { class: "small" }, resultText(g, names)),
        h("span", { class: "room-actions" }, link)));
    }
    rounds.append(h("section", { class: "to-round", "data-round": String(i + 1) },
      h("h3", {}, `Round ${i + 1}`), list));
  });
  $("to-no-rounds").hidden = t.pairings.length > 0;
}

function cell(scores) {
  return scores.map((s) => (s === null ? "*" : points(s))).join(" ");
}

function renderCross(c) {
  const head = clear($("to-cross-head"));
  head.append(h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Player"));
  c.entrants.forEach((e) => head.append(h("th", { scope: "col", title: e.name }, String(e.rank))));
  head.append(h("th", { scope: "col" }, "Points"));
  const rows = clear($("to-cross-rows"));
  for (const e of c.entrants) {
    rows.append(h("tr", { "data-player": e.player_id },
      h("td", {}, String(e.rank)),
      h("td", { class: "to-name" }, e.bot ? `${e.name} (bot)` : e.name),
      ...c.entrants.map((o) => h("td", { class: o.player_id === e.player_id ? "to-self" : "to-cell",
        "data-against": o.player_id }, o.player_id === e.player_id ? "×" : cell(e.results[o.player_id] || []))),
      h("td", { class: "to-points" }, points(e.points))));
  }
}

async function look() {
  const base = `../api/tournaments/${encodeURIComponent(tournamentId)}`;
  const r = await fetch(new URL(base, location.href));
  const t = await r.json();
  if (!r.ok) {
    $("to-title").textContent = r.status === 404 ? "No such tournament" : (t.error || `error ${r.status}`);
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

look().catch(retry);
