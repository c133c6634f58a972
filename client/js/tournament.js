// A tournament's page (/tournaments/{id}): its standings and rounds (an arena's: the time
// left, its games in the order paired, who is on a streak), from GET /api/tournaments/{id},
// asked again every second while it is not finished. Read only.
import { h, clear } from "./dom.js";
import { gameTitle } from "./notation.js";

const $ = (id) => document.getElementById(id);
const tournamentId = decodeURIComponent(location.pathname.replace(/\/+$/, "").split("/").pop() || "");
const EVERY_MS = 1000;
const FORMATS = { round_robin: "Round robin", swiss: "Swiss", arena: "Arena" };
// The arena's standings show games played in the tie-break's place (its tie-break, the wins,
// has a column of its own).
const TIEBREAKS = { round_robin: ["SB", "Sonneborn–Berger"], swiss: ["Buchholz", "Buchholz"],
  arena: ["G", "games played"] };

function timeLeft(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

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
  const arena = t.format === "arena";
  const status = t.status === "waiting" ? `waiting for its start · ${t.standings.length} entered`
    : arena && t.status === "playing" ? `${timeLeft(t.ends_at_ms - Date.now())} left · ${t.round} games`
      : arena ? `finished after ${t.round} games`
        : t.status === "playing" ? `round ${t.round} of ${t.rounds}` : `finished after ${t.rounds} rounds`;
  $("to-status").textContent = `${status} · ${t.rated ? "rated" : "casual"}`;
  $("to-status").dataset.status = t.status;
  const [short, long] = TIEBREAKS[t.format] || ["TB", "tie-break"];
  $("to-tiebreak").textContent = short;
  $("to-tiebreak").title = long;
  const rows = clear($("to-rows"));
  for (const s of t.standings) {
    const name = s.bot ? `${s.name} (bot)` : s.name;
    rows.append(h("tr", { "data-player": s.player_id, "data-streak": s.streak ? "1" : null,
      class: s.active === false ? "muted" : null },
      h("td", {}, String(s.rank)),
      h("td", { class: "to-name" }, name,
        s.streak ? h("span", { class: "to-streak", title: "on a streak: each game scores double" }, " 🔥") : "",
        s.active === false ? h("span", { class: "small" }, " (left)") : ""),
      h("td", { class: "to-points" }, points(s.points)),
      h("td", {}, arena ? String(s.games) : points(s.tiebreak)),
      h("td", {}, String(s.wins)), h("td", {}, String(s.draws)), h("td", {}, String(s.losses))));
  }
  const rounds = clear($("to-rounds"));
  $("to-games-title").textContent = arena ? "Games" : "Rounds";
  if (arena) {
    renderArenaGames(rounds, t, names);
    $("to-no-rounds").hidden = true;
    return;
  }
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

function gameItem(g, names) {
  const who = g.players[1] === null ? `${names[g.players[0]]} sits out`
    : `${names[g.players[0]]} vs ${names[g.players[1]]}`;
  const link = g.room_id === null ? "" : g.result
    ? h("a", { class: "btn small", href: `../review/${encodeURIComponent(g.room_id)}` }, "Review")
    : h("a", { class: "btn primary small", href: `../#/watch/${encodeURIComponent(g.room_id)}` }, "Watch");
  const berserk = (g.berserk || []).map((b, i) => (b ? names[g.players[i]] : null)).filter(Boolean);
  return h("li", { class: "room-item to-game", "data-room": g.room_id || "",
    "data-playing": g.result ? null : "1" },
  h("span", { class: "room-info" }, h("span", { class: "players" }, who)),
  h("span", { class: "small" }, resultText(g, names),
    berserk.length ? ` · berserk: ${berserk.join(", ")}` : ""),
  h("span", { class: "room-actions" }, link));
}

// An arena's games: those being played first (who plays whom now), then the rest, latest
// first.
function renderArenaGames(box, t, names) {
  const playing = t.pairings.filter((g) => !g.result);
  const done = t.pairings.filter((g) => g.result).reverse();
  box.append(h("section", { class: "to-round", id: "to-now" }, h("h3", {}, `Playing now (${playing.length})`),
    h("ul", { class: "room-items" }, playing.map((g) => gameItem(g, names)))));
  box.append(h("section", { class: "to-round", id: "to-done" }, h("h3", {}, `Played (${done.length})`),
    h("ul", { class: "room-items" }, done.map((g) => gameItem(g, names)))));
}

async function look() {
  const r = await fetch(new URL(`../api/tournaments/${encodeURIComponent(tournamentId)}`, location.href));
  const t = await r.json();
  if (!r.ok) {
    $("to-title").textContent = r.status === 404 ? "No such tournament" : (t.error || `error ${r.status}`);
    return;
  }
  render(t);
  if (t.status !== "finished") setTimeout(() => look().catch(retry), EVERY_MS);
}

function retry() {
  setTimeout(() => look().catch(retry), EVERY_MS * 3);
}

look().catch(retry);
