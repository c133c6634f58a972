// Small clickable boards for the explain page: a click plays a move on the position text, so a
// student builds the position to explain by playing it. The server checks the result; these
// boards only need to draw a position and know what a click appends.
import { s, clickable } from "./dom.js";
import { t } from "./i18n.js";
import { moveText } from "./notation.js";

export const START = {
  tictactoe: ".........",
  grundy: "7",
  connect4: "",
  boom: "",
  backgammon: "4HPwATDgc/ABMA",
};

/** Whether the page has a board for this game (else only the text box). */
export function hasBoard(game) {
  return game === "tictactoe" || game === "grundy" || game === "connect4" || game === "boom";
}

/** An SVG board for `position`; `play(newPosition)` is called with the position after a click. */
export function renderBoard(game, position, play) {
  if (game === "tictactoe") return tictactoe(position, play);
  if (game === "grundy") return grundy(position, play);
  if (game === "connect4") return drop(position, play, 6, false);
  if (game === "boom") return drop(position, play, 7, true);
  return null;
}

function tictactoe(position, play) {
  const C = 34, P = 4, size = C * 3 + P * 2;
  const cells = /^[XO.]{9}$/.test(position) ? position : START.tictactoe;
  const mover = [...cells].filter((c) => c === "X").length === [...cells].filter((c) => c === "O").length ? "X" : "O";
  const svg = s("svg", { viewBox: `0 0 ${size} ${size}`, class: "ex-board ex-ttt", "aria-label": t("explain.tttBoard") });
  for (let i = 0; i < 9; i++) {
    const x = P + (i % 3) * C, y = P + Math.floor(i / 3) * C;
    const g = s("g", { class: "ex-cell", "data-cell": i },
      s("rect", { x: x + 1.5, y: y + 1.5, width: C - 3, height: C - 3, rx: 5 }));
    if (cells[i] !== ".") {
      g.append(s("text", { x: x + C / 2, y: y + C / 2 + 7, class: `ex-mark ex-${cells[i]}` }, cells[i]));
    } else {
      clickable(g, `play ${mover} on ${moveText("tictactoe", { cell: i })}`, () => play(cells.slice(0, i) + mover + cells.slice(i + 1)));
    }
    svg.append(g);
  }
  return svg;
}

function grundy(position, play) {
  const heaps = /^\d+(,\d+)*$/.test(position) ? position.split(",").map(Number) : [7];
  const U = 9, W = 250;
  const shown = heaps.map((n) => Math.min(n, 24));
  const svg = s("svg", { viewBox: `0 0 ${W} ${heaps.length * (U + 6) + 6}`, class: "ex-board ex-grundy",
    "aria-label": t("explain.grundyBoard") });
  heaps.forEach((n, i) => {
    const y = 4 + i * (U + 6);
    svg.append(s("text", { x: 2, y: y + U - 1, class: "ex-heap-n" }, String(n)));
    for (let k = 0; k < shown[i]; k++) {
      const coin = s("rect", { x: 26 + k * (U + 1), y, width: U, height: U, rx: 2, class: "ex-coin", "data-heap": i, "data-k": k + 1 });
      const a = k + 1, b = n - a;
      // A split is legal when both parts are non-empty and unequal; the larger part comes first.
      if (b > 0 && a !== b) {
        clickable(coin, t("explain.splitHeap", { n, a: Math.max(a, b), b: Math.min(a, b) }), () => {
          const next = [...heaps.slice(0, i), Math.max(a, b), Math.min(a, b), ...heaps.slice(i + 1)];
          play(next.join(","));
        });
      }
      svg.append(coin);
    }
  });
  return svg;
}

/** Connect-4 or BOOM columns, replayed from the move text (BOOM: every 5th drop of a player is a
 * bomb unless they have one on the board; "B" removes the mover's bomb and their pieces in its
 * row, and the pieces above fall). */
function replayDrops(position, rows, boom) {
  const cols = [[], [], [], [], [], [], []];
  const drops = [0, 0];
  let seat = 0;
  for (const ch of position) {
    if (ch === "B" && boom) {
      let row = -1;
      cols.forEach((col) => col.forEach((p, r) => { if (p.bomb && p.seat === seat) row = r; }));
      if (row >= 0) {
        for (let c = 0; c < 7; c++) {
          const keep = cols[c].filter((p, r) => !(r === row && p.seat === seat));
          cols[c] = keep;
        }
      }
    } else if (/^[1-7]$/.test(ch)) {
      const c = Number(ch) - 1;
      if (cols[c].length >= rows) break;
      drops[seat] += 1;
      const hasBomb = cols.some((col) => col.some((p) => p.bomb && p.seat === seat));
      cols[c].push({ seat, bomb: boom && drops[seat] % 5 === 0 && !hasBomb });
    } else {
      break;
    }
    seat = 1 - seat;
  }
  return { cols, seat, canBoom: boom && cols.some((col) => col.some((p) => p.bomb && p.seat === seat)) };
}

function drop(position, play, rows, boom) {
  const C = 24, P = 4, W = 7 * C + P * 2, H = rows * C + P * 2 + 14;
  const { cols, seat, canBoom } = replayDrops(position, rows, boom);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H + (boom ? 22 : 0)}`, class: `ex-board ex-drop${boom ? " ex-boom" : ""}`,
    "aria-label": t(boom ? "explain.boomBoard" : "explain.c4Board") });
  svg.append(s("rect", { x: 0, y: 0, width: W, height: rows * C + P * 2, rx: 6, class: "ex-frame" }));
  for (let c = 0; c < 7; c++) {
    const g = s("g", { class: "ex-col", "data-col": c });
    g.append(s("rect", { x: P + c * C, y: 0, width: C, height: rows * C + P * 2, class: "ex-col-hit" }));
    for (let r = 0; r < rows; r++) {
      const p = cols[c][r];
      const cx = P + c * C + C / 2, cy = P + (rows - 1 - r) * C + C / 2;
      g.append(s("circle", { cx, cy, r: C / 2 - 2.5, class: p ? `ex-disc ex-s${p.seat}${p.bomb ? " ex-bomb" : ""}` : "ex-hole",
        "data-cell": p ? `${rows - 1 - r},${c},${p.seat}` : null }));
    }
    g.append(s("text", { x: P + c * C + C / 2, y: H - 2, class: "ex-col-n" }, String(c + 1)));
    if (cols[c].length < rows) clickable(g, t("board.dropIn", { n: c + 1 }), () => play(position + String(c + 1)));
    svg.append(g);
  }
  if (boom) {
    const b = s("g", { class: `ex-boom-btn${canBoom ? "" : " off"}` },
      s("rect", { x: W / 2 - 30, y: H + 2, width: 60, height: 18, rx: 5 }),
      s("text", { x: W / 2, y: H + 15 }, `boom (${seat ? "yellow" : "red"})`));
    if (canBoom) clickable(b, "boom", () => play(position + "B"));
    svg.append(b);
  }
  return svg;
}
