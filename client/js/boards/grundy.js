import { h, s, clickable } from "../dom.js";
import { t } from "../i18n.js";

// A heap is one pile, however big: up to TALL coins a coin's thickness apart, then closer
// (two piles side by side would read as two heaps, in a game about splitting heaps).
const TALL = 16, STEP = 13, COIN_W = 44, MAXW = 720;

/** Moves by heap index; a heap of the same size as a listed one shares its moves. */
function movesByHeap(heaps, legal) {
  const bySize = new Map();
  for (const m of legal) {
    const size = heaps[m.heap];
    if (!bySize.has(size)) bySize.set(size, []);
    bySize.get(size).push(m);
  }
  return (i) => bySize.get(heaps[i]) || [];
}

export function render(ctx) {
  const { room, canMove, ui } = ctx;
  const heaps = room.state.heaps || [];
  const movesOf = movesByHeap(heaps, canMove ? room.legal_moves : []);
  if (ui.selected !== undefined && (ui.selected >= heaps.length || !movesOf(ui.selected).length)) {
    ui.selected = undefined;
  }
  const last = room.history.length ? room.history[room.history.length - 1] : null;
  const fresh = last ? new Set([last.heap, last.heap + 1]) : new Set();

  // Lay the heaps out in rows.
  const boxes = [];
  let x = 20, y = 20, rowH = 0;
  for (let i = 0; i < heaps.length; i++) {
    const n = heaps[i];
    const step = Math.min(STEP, (TALL * STEP) / n);
    const w = COIN_W + 24;
    const hgt = Math.min(n, TALL) * STEP + 70;
    if (x + w > MAXW && x > 20) { x = 20; y += rowH + 16; rowH = 0; }
    boxes.push({ i, n, step, x, y, w, h: hgt });
    x += w + 14;
    rowH = Math.max(rowH, hgt);
  }
  // Every heap of a row as tall as the row's tallest, coins standing on the same line.
  const rowTall = new Map();
  for (const b of boxes) rowTall.set(b.y, Math.max(rowTall.get(b.y) || 0, b.h));
  for (const b of boxes) b.h = rowTall.get(b.y);
  const width = Math.max(360, Math.min(MAXW, Math.max(...boxes.map((b) => b.x + b.w), 0) + 20));
  const height = y + rowH + 20;
  const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, class: "board grundy",
    "aria-label": t("board.grundy") });
  svg.append(s("rect", { x: 0, y: 0, width, height, rx: 18, class: "grundy-bg" }));
  for (const b of boxes) {
    const moves = movesOf(b.i);
    const sel = ui.selected === b.i;
    const g = s("g", { class: `heap${moves.length ? " can" : ""}${sel ? " selected" : ""}` +
      `${fresh.has(b.i) ? " last" : ""}`, "data-heap": b.i });
    g.append(s("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: 12, class: "heap-box" }));
    const baseY = b.y + b.h - 40;
    for (let k = 0; k < b.n; k++) {
      const cx = b.x + b.w / 2;
      const cy = baseY - k * b.step;
      const fromTop = b.n - k;  // splitting under this coin leaves fromTop coins on top
      const coin = s("g", { class: "coin" },
        s("ellipse", { cx, cy: cy + 3, rx: COIN_W / 2, ry: 8, class: "coin-side" }),
        s("ellipse", { cx, cy, rx: COIN_W / 2, ry: 8, class: "coin-top" }));
      // Coins squeezed thin make poor targets: the split buttons then do the choosing.
      if (sel && b.step >= STEP / 2) {
        const a = b.n - fromTop, c = fromTop;
        const m = moves.find((mv) => (mv.split[0] === a && mv.split[1] === c) ||
                                     (mv.split[0] === c && mv.split[1] === a));
        if (m) {
          coin.classList.add("cut");
          coin.addEventListener("click", (ev) => {
            ev.stopPropagation();
            ctx.send({ heap: m.heap, split: m.split });
          });
          coin.append(s("title", {}, t("board.splitInto", { a: Math.max(a, c), b: Math.min(a, c) })));
        }
      }
      g.append(coin);
    }
    g.append(s("text", { x: b.x + b.w / 2, y: b.y + b.h - 12, class: "heap-label" },
      String(b.n)));
    if (moves.length) {
      clickable(g, t("board.heapOf", { i: b.i + 1, n: b.n }), () => {
        ui.selected = sel ? undefined : b.i;
        ctx.rerender();
      });
    }
    svg.append(g);
  }

  let controls = null;
  if (canMove) {
    controls = h("div", { class: "splits" });
    if (ui.selected === undefined) {
      controls.append(h("span", { class: "hint" }, t("board.chooseHeap")));
    } else {
      controls.append(h("span", { class: "hint" }, t("board.splitHeap", { n: heaps[ui.selected] })));
      for (const m of movesOf(ui.selected)) {
        controls.append(h("button", { class: "btn split", "data-split": m.split.join("+"),
          on: { click: () => ctx.send({ heap: m.heap, split: m.split }) } },
          `${m.split[0]} + ${m.split[1]}`));
      }
      controls.append(h("button", { class: "btn ghost", on: { click: () => { ui.selected = undefined; ctx.rerender(); } } }, t("common.cancel")));
    }
  }
  return { svg, controls, hint: null };
}

export function key(ctx, ev) {
  if (ev.key === "Escape" && ctx.ui.selected !== undefined) {
    ctx.ui.selected = undefined;
    ctx.rerender();
    return true;
  }
  return false;
}
