// Human-readable text for moves, results and games, in the page's language (./i18n.js).
import { t, has, tWord } from "./i18n.js";

// The games the page draws. Each one's name, its sides' names and its rules in a sentence or
// two (what wins, and what loses when that is the point) are the catalogue's: game.<id>.title,
// game.<id>.side0/side1, game.<id>.rules.
export const GAMES = { tictactoe: {}, grundy: {}, connect4: {}, boom: {}, backgammon: {} };

export function gameRules(id) {
  return has(`game.${id}.rules`) ? t(`game.${id}.rules`) : "";
}

export function gameTitle(id) {
  return has(`game.${id}.title`) ? t(`game.${id}.title`) : id;
}

export function pieceName(game, seat) {
  return has(`game.${game}.side${seat}`) ? t(`game.${game}.side${seat}`) : t("game.seatN", { n: seat + 1 });
}

const pt = (p) => (p === 25 ? t("bg.bar") : p === 0 ? t("bg.off") : String(p));

export function bgPlayText(play) {
  if (!play.length) return t("bg.noMove");
  // Chain consecutive steps of one checker: 24/18 18/13 -> 24/18/13, and count repeats.
  const chains = [];
  for (const [f, t] of play) {
    const c = chains.find((ch) => ch[ch.length - 1] === f && ch.open);
    if (c) c.push(t); else { const n = [f, t]; n.open = true; chains.push(n); }
    if (t === 0) chains[chains.length - 1].open = false;
  }
  const texts = chains.map((c) => c.map(pt).join("/"));
  const counts = new Map();
  for (const t of texts) counts.set(t, (counts.get(t) || 0) + 1);
  return [...counts].map(([t, n]) => (n > 1 ? `${t}(${n})` : t)).join(" ");
}

export function moveText(game, move) {
  if (!move || typeof move !== "object") return String(move);
  switch (game) {
    case "tictactoe": {
      const c = move.cell;
      return "abc"[c % 3] + String(3 - Math.floor(c / 3));
    }
    case "grundy":
      return `${move.split[0] + move.split[1]} → ${move.split[0]}+${move.split[1]}`;
    case "connect4":
      return t("move.column", { n: move.column + 1 });
    case "boom":
      return move.boom ? t("move.boom") : t("move.column", { n: move.column + 1 });
    case "backgammon":
      if (move.action === "resign") return t("move.resigns", { kind: resignKind(move.points) });
      if (move.action) return tWord("bg.action", move.action);
      return bgPlayText(move.play || []);
    default:
      return JSON.stringify(move);
  }
}

// A backgammon resignation's value, times the cube (contract section 8).
export const RESIGN_KINDS = { 1: "single", 2: "gammon", 3: "backgammon" };

/** A resignation's kind in words: "a single game", "a gammon", "a backgammon". */
export function resignKind(points) {
  return tWord("bg.resignKind", RESIGN_KINDS[points] || "single");
}

/** A backgammon match's score as it stands: the state's, or once the match was given away
 * (resigned whole, lost on time or abandoned) the final one, the winner at its points. */
export function matchScore(room) {
  const st = room.state || {};
  const score = (st.score || [0, 0]).slice();
  const r = room.result;
  if (st.match_to && room.status === "finished" && r && r.winner !== null && r.winner !== undefined
      && r.reason !== "match") score[r.winner] = r.points;
  return score;
}

/** Why a game ended (a result's `reason`), in words: reason.<reason> in the catalogue. */
export function reasonText(reason) {
  return tWord("reason", reason || "");
}

/** Backgammon's history walked: who played each entry, and whether it ended a game (a drop,
 * or a play bearing off the mover's last checker). In a match the next game's first mover is
 * its opening roll's (the roll at the ply after that entry: [seat 0's die, seat 1's]). */
function bgWalk(history, rolls) {
  const rollAt = (ply) => {
    let d = null;
    for (const r of rolls || []) if (r.ply === ply) d = r.dice;
    return d;
  };
  const first = (dice) => (dice && dice[1] > dice[0] ? 1 : 0);
  let turn = first(rollAt(0));
  let off = [0, 0];
  return history.map((mv, i) => {
    const a = mv.action;
    // A resignation is its resigner's, whoever was on roll, and ends the game.
    const seat = a === "resign" ? mv.seat : a === "take" || a === "drop" ? 1 - turn : turn;
    let ended = a === "drop" || a === "resign";
    if (!a) {
      off[seat] += (mv.play || []).filter((step) => step[1] === 0).length;
      ended = off[seat] >= 15;
      turn = 1 - turn;
    }
    if (ended) {
      off = [0, 0];
      const d = rollAt(i + 1);
      if (d) turn = first(d);
    }
    return { seat, ended };
  });
}

/** The history entries that ended a backgammon game (a match goes on after them). */
export function gameEnds(history, rolls) {
  return new Set(bgWalk(history, rolls).flatMap((x, i) => (x.ended ? [i] : [])));
}

/** Who played each history entry (backgammon needs its roll/double/take bookkeeping, and in
 * a match each game's opening roll). */
export function historySeats(game, history, rolls) {
  if (game !== "backgammon") return history.map((_, i) => i % 2);
  return bgWalk(history, rolls).map((x) => x.seat);
}

/** The dice a backgammon play (history entry `index`) was made with: the latest roll before it
 * (a roll belongs to the ply after the action that caused it: a roll, a take, or the previous
 * play when the cube is off; the opening roll to ply 0). */
export function playDice(rolls, index) {
  let dice = null;
  for (const r of rolls || []) if (r.ply <= index) dice = r.dice;
  return dice;
}

/** What each backgammon cube action did to the stake: {index: "double to 4" | ...}; in a
 * match the cube is back at 1 in each new game. */
export function cubeNotes(history, rolls) {
  const notes = new Map();
  const walk = bgWalk(history, rolls);
  let cube = 1;
  history.forEach((mv, i) => {
    if (mv.action === "double") notes.set(i, t("bg.note.double", { cube: cube * 2 }));
    else if (mv.action === "take") { cube *= 2; notes.set(i, t("bg.note.take", { cube })); }
    else if (mv.action === "drop") notes.set(i, t("bg.note.drop", { count: cube }));
    else if (mv.action === "resign") {
      const pts = cube * mv.points;
      notes.set(i, t("bg.note.resign", { kind: resignKind(mv.points), count: pts }));
    }
    if (walk[i].ended) cube = 1;
  });
  return notes;
}

/** A seat's name as the page shows it: a house bot's (the server's "bot (LEVEL)") in the
 * page's language, anyone else's as they chose it; "" for an empty seat. */
export function seatName(seat) {
  if (!seat || !seat.name) return "";
  const m = seat.kind === "bot" ? /^bot \((\w+)\)$/.exec(seat.name) : null;
  return m ? t("common.botLevel", { level: tWord("level", m[1]) }) : seat.name;
}
