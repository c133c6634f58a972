// Connect-4 and BOOM: columns you drop pieces into. BOOM adds bombs, the "boom" action and
// explosions; pieces fall with a short CSS animation.
import { h, s, clickable } from "../dom.js";
import { t } from "../i18n.js";
import { gameTitle } from "../notation.js";

const CELL = 72, PAD = 16, TOP = 56;

function cellKey(r, c) { return `${r},${c}`; }

// The running animation (falls and blasts) outlives re-renders: a bot may answer within
// milliseconds, and its update must not cut the explosion short.
const ANIM_MS = 950;
let anim = null;  // {roomId, t0, falls: Map cellKey -> cells, blasts: [[r, c]]}

function bombIcon(cx, cy) {
  return s("g", { class: "bomb" },
    s("circle", { cx, cy: cy + 3, r: 13, class: "bomb-body" }),
    s("rect", { x: cx - 4, y: cy - 14, width: 8, height: 6, rx: 1.5, class: "bomb-cap" }),
    s("path", { d: `M${cx} ${cy - 14} q 4 -8 11 -6`, class: "bomb-fuse" }),
    s("circle", { cx: cx + 12, cy: cy - 20, r: 3.5, class: "bomb-spark" }),
    s("circle", { cx: cx - 5, cy: cy - 2, r: 3, class: "bomb-shine" }));
}

/** Cells that should fall in this render, with the distance they fall (in cells). */
function falls(ctx, board) {
  const out = new Map();
  const prev = ctx.prev;
  if (!ctx.fresh || !prev || !prev.board) return out;
  const rows = board.length, cols = board[0].length;
  const st = ctx.room.state;
  if (st.exploded && st.exploded.length && st.last_move && st.last_move.boom) {
    // Pieces above an exploded cell drop by the number of removed cells below them.
    const removed = new Map();
    for (const [r, c] of st.exploded) {
      if (!removed.has(c)) removed.set(c, []);
      removed.get(c).push(r);
    }
    for (const [c, rs] of removed) {
      for (let r = 0; r < rows; r++) {
        if (board[r][c] < 0) continue;
        const below = rs.filter((x) => x >= r).length;  // rows counted from the top
        if (below > 0 && r < Math.max(...rs) + 1) out.set(cellKey(r, c), below);
      }
    }
    return out;
  }
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      if (board[r][c] >= 0 && prev.board[r] && prev.board[r][c] < 0) out.set(cellKey(r, c), r + 1.4);
    }
  }
  return out;
}

export function render(ctx) {
  const { room, canMove, game } = ctx;
  const st = room.state;
  const board = st.board || [];
  const rows = board.length, cols = rows ? board[0].length : 7;
  const W = PAD * 2 + cols * CELL, H = TOP + PAD + rows * CELL + 30;
  const legalCols = new Set();
  let canBoom = false;
  if (canMove) {
    for (const m of room.legal_moves) {
      if (m.boom) canBoom = true; else legalCols.add(m.column);
    }
  }
  const bombs = new Set((st.bombs || []).map(([r, c]) => cellKey(r, c)));
  const line = new Set((st.winning_line || st.losing_line || []).map(([r, c]) => cellKey(r, c)));
  const lastCol = game === "boom"
    ? (st.last_move && st.last_move.column !== undefined ? st.last_move.column : null)
    : st.last_move;
  let lastRow = null;
  if (lastCol !== null && lastCol !== undefined) {
    for (let r = 0; r < rows; r++) if (board[r][lastCol] >= 0) { lastRow = r; break; }
  }
  // Falls and blasts, each with its start time; those still running carry over.
  const now = Date.now();
  const live = anim && anim.roomId === room.room_id
    ? { falls: new Map([...anim.falls].filter(([, f]) => now - f.t0 < ANIM_MS)),
        blasts: anim.blasts.filter((b) => now - b.t0 < ANIM_MS) }
    : { falls: new Map(), blasts: [] };
  if (ctx.fresh) {
    for (const [k, dist] of falls(ctx, board)) live.falls.set(k, { dist, t0: now });
    if (st.exploded && st.exploded.length && st.last_move && st.last_move.boom) {
      for (const [r, c] of st.exploded) live.blasts.push({ r, c, t0: now });
    }
  }
  anim = { roomId: room.room_id, ...live };
  const drop = new Map([...live.falls].filter(([k]) => {
    const [r, c] = k.split(",").map(Number);
    return board[r] && board[r][c] >= 0;
  }));
  const mover = room.to_move;
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: `board drop ${game}`,
    "aria-label": t("board.of", { game: gameTitle(game) }) });
  const defs = s("defs", {},
    s("radialGradient", { id: "p0", cx: "40%", cy: "35%", r: "65%" },
      s("stop", { offset: "0%", "stop-color": "#ff8a7a" }),
      s("stop", { offset: "100%", "stop-color": "#d62f2f" })),
    s("radialGradient", { id: "p1", cx: "40%", cy: "35%", r: "65%" },
      s("stop", { offset: "0%", "stop-color": "#ffe98a" }),
      s("stop", { offset: "100%", "stop-color": "#f2b705" })));
  svg.append(defs);
  // The frame behind the pieces.
  svg.append(s("rect", { x: 4, y: TOP - 6, width: W - 8, height: rows * CELL + PAD + 8, rx: 20,
    class: "drop-frame" }));
  const pieces = s("g", { class: "pieces" });
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const cx = PAD + c * CELL + CELL / 2, cy = TOP + r * CELL + CELL / 2 + 4;
      const v = board[r][c];
      pieces.append(s("circle", { cx, cy, r: CELL * 0.38, class: "hole" }));
      if (v >= 0) {
        const k = cellKey(r, c);
        const cls = ["piece", `p${v}`];
        if (r === lastRow && c === lastCol) cls.push("last");
        if (line.has(k)) cls.push("line");
        const g = s("g", { class: cls.join(" "), "data-row": r, "data-col": c });
        if (drop.has(k)) {
          const f = drop.get(k);
          g.classList.add("falling");
          g.style.setProperty("--fall", `${-f.dist * CELL}px`);
          g.style.setProperty("--fall-time", `${Math.min(0.55, 0.18 + f.dist * 0.06)}s`);
          g.style.setProperty("animation-delay", `${-(now - f.t0)}ms`);
        }
        g.append(s("circle", { cx, cy, r: CELL * 0.38, fill: `url(#p${v})`, class: "disc" }));
        g.append(s("circle", { cx, cy, r: CELL * 0.27, class: "disc-ring" }));
        if (bombs.has(k)) g.append(bombIcon(cx, cy));
        pieces.append(g);
      }
    }
  }
  svg.append(pieces);
  if (live.blasts.length) {
    for (const { r, c, t0 } of live.blasts) {
      const cx = PAD + c * CELL + CELL / 2, cy = TOP + r * CELL + CELL / 2 + 4;
      const pts = [];
      for (let i = 0; i < 16; i++) {
        const a = (Math.PI * 2 * i) / 16, rad = i % 2 ? CELL * 0.22 : CELL * 0.55;
        pts.push(`${cx + Math.cos(a) * rad},${cy + Math.sin(a) * rad}`);
      }
      svg.append(s("polygon", { points: pts.join(" "), class: "blast",
        style: { "transform-origin": `${cx}px ${cy}px`, "animation-delay": `${-(now - t0)}ms` } }));
    }
  }
  // Column targets: the whole column is a button; a ghost piece shows where it lands.
  for (let c = 0; c < cols; c++) {
    const x = PAD + c * CELL;
    const g = s("g", { class: "col", "data-col": c });
    g.append(s("rect", { x, y: 0, width: CELL, height: H - 24, class: "col-hit" }));
    g.append(s("text", { x: x + CELL / 2, y: H - 8, class: "col-num" }, String(c + 1)));
    if (legalCols.has(c)) {
      const bomb = game === "boom" && st.next_is_bomb && st.next_is_bomb[mover];
      g.append(s("g", { class: "ghost" },
        s("circle", { cx: x + CELL / 2, cy: TOP / 2, r: CELL * 0.33, class: `ghost-disc p${mover}` }),
        bomb ? bombIcon(x + CELL / 2, TOP / 2) : null));
      clickable(g, t("board.dropIn", { n: c + 1 }), () => ctx.send({ column: c }));
    }
    svg.append(g);
  }
  let controls = null;
  if (game === "boom") {
    const nb = st.next_is_bomb || [];
    controls = h("div", { class: "boom-controls" });
    if (canBoom) {
      controls.append(h("button", { class: "btn boom-btn", id: "boom-btn",
        on: { click: () => ctx.send({ boom: true }) } },
        s("svg", { viewBox: "-20 -26 40 46", class: "btn-bomb", "aria-hidden": "true" }, bombIcon(0, 0)), t("move.boom")));
    }
    if (mover !== null && mover !== undefined && nb[mover]) {
      controls.append(h("span", { class: "hint bomb-next" }, t("board.nextBomb")));
    }
  }
  const hint = canMove ? t(canBoom ? "board.dropHintBoom" : "board.dropHint", { cols }) : null;
  return { svg, controls, hint };
}

export function key(ctx, ev) {
  if (!ctx.canMove) return false;
  if (/^[1-9]$/.test(ev.key)) {
    const c = Number(ev.key) - 1;
    if (ctx.room.legal_moves.some((m) => m.column === c)) ctx.send({ column: c });
    return true;
  }
  if ((ev.key === "b" || ev.key === "B") && ctx.room.legal_moves.some((m) => m.boom)) {
    ctx.send({ boom: true });
    return true;
  }
  return false;
}
