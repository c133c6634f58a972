import { s, clickable } from "../dom.js";
import { moveText } from "../notation.js";
import { t } from "../i18n.js";

// M: the margin that holds the coordinates (files a–c under the board, ranks 3–1 on its
// left), written as the move list writes a square.
const C = 110, PAD = 14, SIZE = C * 3 + PAD * 2, M = 26;

function mark(seat, cx, cy, cls) {
  const r = C * 0.28;
  if (seat === 0) {
    return s("g", { class: `ttt-x ${cls}` },
      s("line", { x1: cx - r, y1: cy - r, x2: cx + r, y2: cy + r }),
      s("line", { x1: cx + r, y1: cy - r, x2: cx - r, y2: cy + r }));
  }
  return s("circle", { class: `ttt-o ${cls}`, cx, cy, r });
}

export function render(ctx) {
  const { room, canMove } = ctx;
  const cells = room.state.cells || [];
  const legal = new Set(canMove ? room.legal_moves.map((m) => m.cell) : []);
  const last = room.history.length ? room.history[room.history.length - 1].cell : null;
  const svg = s("svg", { viewBox: `${-M} ${-M} ${SIZE + 2 * M} ${SIZE + 2 * M}`, class: "board ttt", role: "grid",
    "aria-label": t("board.of", { game: t("game.tictactoe.title") }) });
  svg.append(s("rect", { x: 0, y: 0, width: SIZE, height: SIZE, rx: 18, class: "ttt-bg" }));
  for (let k = 0; k < 3; k++) {
    const mid = PAD + k * C + C / 2;
    // The square in column k of the bottom row, and in row k of the left column, name them.
    const file = moveText("tictactoe", { cell: 6 + k })[0], rank = moveText("tictactoe", { cell: 3 * k }).slice(1);
    svg.append(s("text", { x: mid, y: SIZE + M / 2, class: "coord", "data-axis": "col", "dominant-baseline": "central" }, file));
    svg.append(s("text", { x: -M / 2, y: mid, class: "coord", "data-axis": "row", "dominant-baseline": "central" }, rank));
  }
  for (let i = 0; i < 9; i++) {
    const x = PAD + (i % 3) * C, y = PAD + Math.floor(i / 3) * C;
    const g = s("g", { class: "ttt-cell", "data-cell": i });
    g.append(s("rect", { x: x + 4, y: y + 4, width: C - 8, height: C - 8, rx: 12,
      class: i === last ? "ttt-sq last" : "ttt-sq" }));
    if (cells[i] === 0 || cells[i] === 1) {
      g.append(mark(cells[i], x + C / 2, y + C / 2, i === last && ctx.fresh ? "pop" : ""));
    } else if (legal.has(i)) {
      g.append(s("g", { class: "ghost" }, mark(room.to_move, x + C / 2, y + C / 2, "")));
      clickable(g, t("board.square", { square: moveText("tictactoe", { cell: i }), key: i + 1 }), () => ctx.send({ cell: i }));
    }
    svg.append(g);
  }
  const line = room.state.winning_line;
  if (line && line.length >= 2) {
    const p = (i) => [PAD + (i % 3) * C + C / 2, PAD + Math.floor(i / 3) * C + C / 2];
    const [a, b] = [p(line[0]), p(line[line.length - 1])];
    svg.append(s("line", { x1: a[0], y1: a[1], x2: b[0], y2: b[1], class: "win-line" }));
  }
  return { svg, controls: null, hint: canMove ? t("board.tttHint") : null };
}

export function key(ctx, ev) {
  if (!ctx.canMove || !/^[1-9]$/.test(ev.key)) return false;
  const cell = Number(ev.key) - 1;
  if (ctx.room.legal_moves.some((m) => m.cell === cell)) ctx.send({ cell });
  return true;
}
