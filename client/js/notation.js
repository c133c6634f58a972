// Human-readable text for moves, results and games.

// Each game's rules in a sentence or two: what wins, and what loses when that is the point.
// A game's title is the engine's (GET /api/games' "title"): one name per game on every page.
export const GAMES = {
  tictactoe: { title: "Tic-tac-toe", pieces: ["X", "O"],
    rules: "Take turns marking a square: three of your marks in a row, column or diagonal wins. A full board with no line is a draw." },
  grundy: { title: "Grundy's game", pieces: ["First", "Second"],
    rules: "On your turn, split one heap into two unequal heaps (a heap of 1 or 2 cannot be split). The player who cannot move loses." },
  connect4: { title: "Connect-4", pieces: ["Red", "Yellow"],
    rules: "Drop a piece into a column; it falls to the lowest free cell. The first with four of their own in a row, column or diagonal wins." },
  boom: { title: "Desconecta-4 BOOM", pieces: ["Red", "Yellow"],
    rules: "Drop pieces as in Connect-4, but four of your own in a line LOSES. Every 5th piece is a bomb; BOOM! removes your bomb and your pieces in its row, and the pieces above fall." },
  backgammon: { title: "Backgammon", pieces: ["White", "Black"],
    rules: "Bring your 15 checkers round into your home board and bear them off: the first to bear off all wins. Before rolling you may double the stake; your opponent takes it, or drops and loses." },
};

export function gameRules(id) {
  return (GAMES[id] && GAMES[id].rules) || "";
}

export function gameTitle(id) {
  return (GAMES[id] && GAMES[id].title) || id;
}

export function pieceName(game, seat) {
  const g = GAMES[game];
  return g ? g.pieces[seat] : `Seat ${seat + 1}`;
}

const pt = (p) => (p === 25 ? "bar" : p === 0 ? "off" : String(p));

export function bgPlayText(play) {
  if (!play.length) return "no move";
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
      return `column ${move.column + 1}`;
    case "boom":
      return move.boom ? "BOOM!" : `column ${move.column + 1}`;
    case "backgammon":
      if (move.action === "resign") return `resigns a ${RESIGN_KINDS[move.points] || "game"}`;
      if (move.action) return move.action;
      return bgPlayText(move.play || []);
    default:
      return JSON.stringify(move);
  }
}

// A backgammon resignation's value, times the cube (contract section 8).
export const RESIGN_KINDS = { 1: "single", 2: "gammon", 3: "backgammon" };

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

const REASONS = {
  three_in_a_row: "three in a row",
  four_in_a_row: "four in a row",
  board_full: "the board is full",
  no_moves: "no moves left",
  resign: "resignation",
  resigned: "resignation",
  drop: "double dropped",
  match: "the match",
  single: "single game",
  gammon: "gammon",
  backgammon: "backgammon",
  timeout: "time ran out",
  move_limit: "the move limit",
  time: "time ran out",
  agreement: "agreed",
  abandoned: "the opponent left",
  aborted: "aborted",
  expired: "adjourned too long",
};

export function reasonText(reason) {
  return REASONS[reason] || String(reason || "").replace(/_/g, " ");
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
    if (mv.action === "double") notes.set(i, `double to ${cube * 2}`);
    else if (mv.action === "take") { cube *= 2; notes.set(i, `take: cube at ${cube}`); }
    else if (mv.action === "drop") notes.set(i, `drop: loses ${cube}`);
    else if (mv.action === "resign") {
      const pts = cube * mv.points;
      notes.set(i, `resigns a ${RESIGN_KINDS[mv.points]}: loses ${pts} point${pts === 1 ? "" : "s"}`);
    }
    if (walk[i].ended) cube = 1;
  });
  return notes;
}
