// Backgammon: a wooden board with felt, points, bar, borne-off trays, dice and the cube.
// The viewer's side is at the bottom, home board bottom right; the opponent's point q is the
// viewer's point 25 - q. Plays are built step by step with PlayBuilder (bg-logic.js).
import { h, s, clickable } from "../dom.js";
import { PlayBuilder, pips } from "../bg-logic.js";
import { historySeats } from "../notation.js";

const W = 792, H = 560, F = 16, P = 52, BARW = 56, R = 23;
const LX = F, BX = F + 6 * P, RX = BX + BARW, TX = RX + 6 * P + F, TW = 64;
const TRI = 215, HALF = H / 2;
const COLORS = ["white", "black"];

function pointX(p) {
  const idx = p <= 12 ? 12 - p : p - 13;
  return idx < 6 ? LX + idx * P : RX + (idx - 6) * P;
}
const isTop = (p) => p >= 13;

/** y of the k-th checker (0 = the one at the edge) of a stack of n on point p. */
function stackY(p, k, n) {
  const step = n > 5 ? (8 * R) / (n - 1) : 2 * R;
  return isTop(p) ? F + R + 2 + k * step : H - F - R - 2 - k * step;
}

function checker(cx, cy, seat, cls = "") {
  return s("g", { class: `checker c${seat} ${cls}` },
    s("circle", { cx, cy, r: R, fill: `url(#chk${seat})`, class: "chk-body" }),
    s("circle", { cx, cy, r: R * 0.62, class: "chk-ring" }));
}

function die(x, y, size, value, seat, used, fresh) {
  const g = s("g", { class: `die d${seat}${used ? " used" : ""}${fresh ? " rolled" : ""}`, "data-die": value });
  g.append(s("rect", { x, y, width: size, height: size, rx: size * 0.18, class: "die-body" }));
  const q = size / 4;
  const spots = {
    1: [[2, 2]], 2: [[1, 1], [3, 3]], 3: [[1, 1], [2, 2], [3, 3]],
    4: [[1, 1], [3, 1], [1, 3], [3, 3]], 5: [[1, 1], [3, 1], [2, 2], [1, 3], [3, 3]],
    6: [[1, 1], [3, 1], [1, 2], [3, 2], [1, 3], [3, 3]],
  }[value] || [];
  for (const [a, b] of spots) g.append(s("circle", { cx: x + a * q, cy: y + b * q, r: size * 0.09, class: "pip" }));
  return g;
}

function defs() {
  const grad = (id, a, b) => s("radialGradient", { id, cx: "38%", cy: "32%", r: "70%" },
    s("stop", { offset: "0%", "stop-color": a }), s("stop", { offset: "100%", "stop-color": b }));
  return s("defs", {},
    grad("chk0", "#fffdf6", "#d9cfb8"),
    grad("chk1", "#5a5a5e", "#141416"),
    s("linearGradient", { id: "wood", x1: "0", y1: "0", x2: "1", y2: "1" },
      s("stop", { offset: "0%", "stop-color": "#7a4a24" }),
      s("stop", { offset: "50%", "stop-color": "#5b3418" }),
      s("stop", { offset: "100%", "stop-color": "#6d3f1d" })),
    s("radialGradient", { id: "felt", cx: "50%", cy: "50%", r: "75%" },
      s("stop", { offset: "0%", "stop-color": "#2f7a4b" }),
      s("stop", { offset: "100%", "stop-color": "#1b4d2f" })),
    s("pattern", { id: "grain", width: 120, height: 12, patternUnits: "userSpaceOnUse" },
      s("path", { d: "M0 6 Q30 2 60 6 T120 6", class: "grain" })));
}

/** The builder for this ply (kept in ui across renders), or null when not building. */
function builderFor(ctx, v) {
  const { room, ui, canMove } = ctx;
  const st = room.state;
  const plays = canMove ? room.legal_moves.filter((m) => m.play).map((m) => m.play) : [];
  if (!canMove || st.phase !== "move" || !st.dice || !plays.length) {
    ui.builder = null;
    return null;
  }
  if (!ui.builder || ui.builderPly !== room.ply || ui.builderSeat !== v) {
    ui.builder = new PlayBuilder(st.board[v], st.board[1 - v], st.dice, plays);
    ui.builderPly = room.ply;
    ui.builderSeat = v;
    ui.sel = null;
  }
  return ui.builder;
}

export function render(ctx) {
  const { room, ui } = ctx;
  const st = room.state;
  const v = ctx.viewSeat;
  const b = builderFor(ctx, v);
  const me = b ? b.me : st.board[v];
  const opp = b ? b.opp : st.board[1 - v];
  const sources = b ? new Set(b.sources()) : new Set();
  if (ui.sel !== null && ui.sel !== undefined && !sources.has(ui.sel)) ui.sel = null;
  const dests = b && ui.sel !== null && ui.sel !== undefined ? b.destinations(ui.sel) : new Map();
  const mover = st.turn;

  // The last play, in the viewer's numbering.
  const lastFrom = new Set(), lastTo = new Set();
  const hist = room.history;
  if (hist.length && hist[hist.length - 1].play && !(b && b.steps.length)) {
    const seats = historySeats("backgammon", hist, room.rolls);
    const m = seats[seats.length - 1];
    const conv = (p) => (m === v ? p : p === 25 || p === 0 ? -p - 1 : 25 - p);
    for (const [f, t] of hist[hist.length - 1].play) { lastFrom.add(conv(f)); lastTo.add(conv(t)); }
  }

  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "board bg", "aria-label": "backgammon board" });
  svg.append(defs());
  svg.append(s("rect", { x: 0, y: 0, width: W, height: H, rx: 14, fill: "url(#wood)", class: "bg-frame" }));
  svg.append(s("rect", { x: 0, y: 0, width: W, height: H, rx: 14, fill: "url(#grain)", class: "bg-grain" }));
  for (const x of [LX, RX]) {
    svg.append(s("rect", { x, y: F, width: 6 * P, height: H - 2 * F, fill: "url(#felt)", class: "felt" }));
  }
  svg.append(s("rect", { x: BX, y: F - 4, width: BARW, height: H - 2 * F + 8, class: "bar" }));
  svg.append(s("rect", { x: TX, y: F, width: TW, height: TRI + 5, rx: 6, class: "tray" }));
  svg.append(s("rect", { x: TX, y: H - F - TRI - 5, width: TW, height: TRI + 5, rx: 6, class: "tray" }));

  // Points.
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p), top = isTop(p);
    const tipY = top ? F + TRI : H - F - TRI;
    const baseY = top ? F : H - F;
    const cls = ["point", p % 2 ? "pt-a" : "pt-b"];
    if (lastTo.has(p)) cls.push("last-to");
    if (lastFrom.has(p)) cls.push("last-from");
    svg.append(s("polygon", { points: `${x + 2},${baseY} ${x + P - 2},${baseY} ${x + P / 2},${tipY}`,
      class: cls.join(" ") }));
    svg.append(s("text", { x: x + P / 2, y: top ? 11.5 : H - 4, class: "pt-num" }, String(p)));
  }

  // Checkers on the points.
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p) + P / 2;
    let seat = null, n = 0;
    if (me[p] > 0) { seat = v; n = me[p]; }
    else if (opp[25 - p] > 0) { seat = 1 - v; n = opp[25 - p]; }
    for (let k = 0; k < n; k++) {
      const cls = [];
      if (k === n - 1 && seat === v) {
        if (sources.has(p)) cls.push("can-move");
        if (ui.sel === p) cls.push("selected");
      }
      svg.append(checker(x, stackY(p, k, n), seat, cls.join(" ")));
    }
    if (n > 5) {
      svg.append(s("text", { x, y: stackY(p, n - 1, n) + 5, class: `stack-count c${seat}` }, String(n)));
    }
  }

  // The bar: the viewer's checkers in the upper half, the opponent's in the lower half.
  const barX = BX + BARW / 2;
  const barStack = (n, seat, up, mine) => {
    for (let k = 0; k < n; k++) {
      const y = up ? HALF - 50 - k * 16 : HALF + 50 + k * 16;
      const cls = [];
      if (mine && k === n - 1) {
        if (sources.has(25)) cls.push("can-move");
        if (ui.sel === 25) cls.push("selected");
      }
      svg.append(checker(barX, y, seat, cls.join(" ")));
    }
    if (n > 1) svg.append(s("text", { x: barX, y: (up ? HALF - 50 - (n - 1) * 16 : HALF + 50 + (n - 1) * 16) + 5,
      class: `stack-count c${seat}` }, String(n)));
  };
  barStack(me[25], v, true, true);
  barStack(opp[25], 1 - v, false, false);
  if (lastFrom.has(25) || lastFrom.has(-26)) {
    svg.append(s("rect", { x: BX + 3, y: lastFrom.has(25) ? F : HALF, width: BARW - 6, height: HALF - F, class: "last-bar" }));
  }

  // Borne-off trays: the viewer's at the bottom, the opponent's at the top.
  const tray = (n, seat, bottom) => {
    for (let k = 0; k < n; k++) {
      const y = bottom ? H - F - 4 - (k + 1) * 13 : F + 4 + k * 13;
      svg.append(s("rect", { x: TX + 6, y, width: TW - 12, height: 11, rx: 3, class: `slab c${seat}` }));
    }
  };
  tray(me[0], v, true);
  tray(opp[0], 1 - v, false);

  // Pip counts on the bar.
  svg.append(s("text", { x: barX, y: H - F - 8, class: "pip-label", id: "pip-me" }, String(pips(me))));
  svg.append(s("text", { x: barX, y: F + 14, class: "pip-label", id: "pip-opp" }, String(pips(opp))));

  // The cube.
  const cube = st.cube || { value: 1, owner: null, enabled: false };
  if (cube.enabled) {
    const cy = cube.owner === null || cube.owner === undefined ? HALF : cube.owner === v ? HALF + 26 : HALF - 26;
    const g = s("g", { class: "cube", "data-owner": cube.owner === null ? "center" : cube.owner });
    g.append(s("rect", { x: TX + TW / 2 - 19, y: cy - 19, width: 38, height: 38, rx: 6, class: "cube-body" }));
    g.append(s("text", { x: TX + TW / 2, y: cy + 7, class: "cube-text" }, String(cube.value === 1 ? 64 : cube.value)));
    svg.append(g);
  }

  // Dice: the mover's, on the mover's right-hand half.
  if (st.dice && (st.phase === "move")) {
    const onRight = mover === v;
    const cx = (onRight ? RX : LX) + 3 * P;
    let values = st.dice[0] === st.dice[1] ? [st.dice[0], st.dice[0], st.dice[0], st.dice[0]] : st.dice.slice();
    const left = b ? b.diceLeft.slice() : values.slice();
    const size = values.length === 4 ? 38 : 46, gap = 10;
    const total = values.length * size + (values.length - 1) * gap;
    values.forEach((d, i) => {
      const j = left.indexOf(d);
      const used = j < 0;
      if (!used) left.splice(j, 1);
      svg.append(die(cx - total / 2 + i * (size + gap), HALF - size / 2, size, d, mover, used, ctx.fresh));
    });
  }

  // Click targets (on top of everything).
  const target = (p, x, y, w, hh, label) => {
    const hot = sources.has(p) || dests.has(p);
    const r = s("rect", { x, y, width: w, height: hh, class: `hit${dests.has(p) ? " dest" : ""}${sources.has(p) ? " src" : ""}`,
      "data-point": p });
    if (hot || (ui.sel !== null && ui.sel !== undefined)) {
      clickable(r, label, () => onPoint(ctx, b, p, dests));
    }
    svg.append(r);
  };
  if (b) {
    for (let p = 1; p <= 24; p++) {
      const x = pointX(p);
      target(p, x, isTop(p) ? F : H - F - TRI - 20, P, TRI + 20, `point ${p}`);
      if (dests.has(p)) {
        const top = isTop(p);
        svg.append(s("circle", { cx: x + P / 2, cy: top ? F + TRI + 12 : H - F - TRI - 12, r: 7, class: "dest-dot" }));
      }
    }
    target(25, BX, F, BARW, HALF - F, "bar");
    target(0, TX, H - F - TRI - 5, TW, TRI + 5, "bear off");
  }

  return { svg, controls: controls(ctx, b), hint: null };
}

function onPoint(ctx, b, p, dests) {
  const ui = ctx.ui;
  if (ui.sel !== null && ui.sel !== undefined && dests.has(p)) {
    b.push(dests.get(p));
    ui.sel = null;
    // A single remaining movable checker is selected at once.
    const src = b.sources();
    if (src.length === 1 && !b.complete()) ui.sel = src[0];
  } else if (b.sources().includes(p)) {
    ui.sel = ui.sel === p ? null : p;
  } else {
    ui.sel = null;
  }
  ctx.rerender();
}

function controls(ctx, b) {
  const { room, canMove, ui } = ctx;
  const st = room.state;
  const box = h("div", { class: "bg-controls" });
  if (!canMove) {
    if (st.phase === "take") box.append(h("span", { class: "hint" }, `Doubled to ${st.cube.value * 2}: waiting for the answer.`));
    return box;
  }
  const has = (a) => room.legal_moves.some((m) => m.action === a);
  if (has("roll") || has("double")) {
    if (has("roll")) box.append(h("button", { class: "btn primary", id: "roll-btn", on: { click: () => ctx.send({ action: "roll" }) } }, "Roll dice"));
    if (has("double")) box.append(h("button", { class: "btn", id: "double-btn", on: { click: () => ctx.send({ action: "double" }) } }, `Double to ${st.cube.value * 2}`));
    box.append(h("span", { class: "hint" }, "R to roll."));
  }
  if (has("take") || has("drop")) {
    box.append(h("span", { class: "hint strong" }, `Your opponent doubles to ${st.cube.value * 2}.`));
    box.append(h("button", { class: "btn primary", id: "take-btn", on: { click: () => ctx.send({ action: "take" }) } }, "Take"));
    box.append(h("button", { class: "btn danger", id: "drop-btn", on: { click: () => ctx.send({ action: "drop" }) } }, "Drop"));
  }
  if (b) {
    const done = b.complete();
    const noMove = room.legal_moves.length === 1 && room.legal_moves[0].play && !room.legal_moves[0].play.length;
    if (noMove) {
      box.append(h("span", { class: "hint strong" }, "No legal move with these dice."));
      box.append(h("button", { class: "btn primary", id: "play-btn", on: { click: () => ctx.send({ play: [] }) } }, "Pass"));
      return box;
    }
    box.append(h("button", { class: "btn", id: "undo-btn", disabled: !b.steps.length,
      on: { click: () => { b.undo(); ui.sel = null; ctx.rerender(); } } }, "↶ Undo"));
    box.append(h("button", { class: `btn primary${done && b.exhausted() ? " pulse" : ""}`, id: "play-btn",
      disabled: !done, on: { click: () => sendPlay(ctx, b) } }, "Play ✓"));
    const steps = b.steps.map((x) => `${x.step[0] === 25 ? "bar" : x.step[0]}/${x.step[1] === 0 ? "off" : x.step[1]}`).join(" ");
    box.append(h("span", { class: "hint", id: "partial" }, steps || "Click a checker, then a highlighted point (Enter plays, Backspace undoes)."));
  }
  return box;
}

function sendPlay(ctx, b) {
  const play = b.complete();
  if (play) ctx.send({ play });
}

export function key(ctx, ev) {
  const { room, canMove, ui } = ctx;
  if (!canMove) return false;
  const has = (a) => room.legal_moves.some((m) => m.action === a);
  if ((ev.key === "r" || ev.key === "R") && has("roll")) { ctx.send({ action: "roll" }); return true; }
  const b = ui.builder;
  if (!b) return false;
  if (ev.key === "Backspace" || ev.key === "u") { b.undo(); ui.sel = null; ctx.rerender(); return true; }
  if (ev.key === "Escape") { ui.sel = null; ctx.rerender(); return true; }
  if (ev.key === "Enter" && b.complete() && !(ev.target && ev.target.closest && ev.target.closest("[role=button],button"))) {
    sendPlay(ctx, b);
    return true;
  }
  return false;
}

export function cardExtra(room, seat) {
  const p = room.state.pips;
  return p ? `${COLORS[seat]} · pips ${p[seat]}` : COLORS[seat];
}
