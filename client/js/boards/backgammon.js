// Backgammon: a wooden board with felt, points, bar, borne-off trays, dice and the cube.
// The viewer's side is at the bottom, home board bottom right; the opponent's point q is the
// viewer's point 25 - q. Plays are built step by step with PlayBuilder (bg-logic.js).
// On a phone the board is turned a quarter (the viewer's side on the left, home board bottom
// left) and made less deep, so that a point is a finger-sized target across a narrow screen.
import { h, s, clickable } from "../dom.js";
import { PlayBuilder, pips } from "../bg-logic.js";
import { gameEnds, historySeats, matchScore, playDice, reasonText, pieceName } from "../notation.js";
import { t } from "../i18n.js";

const W = 792, F = 16, P = 52, BARW = 56, R = 23;
const LX = F, BX = F + 6 * P, RX = BX + BARW, TX = RX + 6 * P + F, TW = 64;
// H: the board's depth; TRI: a point's length; SPAN: the most a stack may spread from its
// first checker's centre to its last; DIE: a die's size. At 390 px a tall board's point
// (P units of the long side) is P * 370 / 400 = 48 px.
const WIDE = { H: 560, TRI: 215, SPAN: 8 * R, DIE: 46, tall: false };
const TALL = { H: 400, TRI: 150, SPAN: 5 * R, DIE: 36, tall: true };
const phone = typeof matchMedia === "function" ? matchMedia("(max-width: 560px)") : null;
let redraw = null;  // the latest board's rerender, for a turn of the phone
if (phone) phone.addEventListener("change", () => { if (redraw) redraw(); });

// How long one checker takes from one point to the next.
const HOP_MS = 280;
// The running animation of a play outlives redraws (an analysis or a roll may redraw the
// board while it plays): {roomId, index, t0, moves: [{key, path, start, ms}]}.
let anim = null;

function pointX(p) {
  const idx = p <= 12 ? 12 - p : p - 13;
  return idx < 6 ? LX + idx * P : RX + (idx - 6) * P;
}
const isTop = (p) => p >= 13;

/** y of the k-th checker (0 = the one at the edge) of a stack of n on point p. */
function stackY(G, p, k, n) {
  const step = n > 1 ? Math.min(2 * R, G.SPAN / (n - 1)) : 0;
  return isTop(p) ? F + R + 2 + k * step : G.H - F - R - 2 - k * step;
}

function slabStep(G) {
  return Math.min(13, (G.TRI - 4) / 15);
}

/**
 * Where the k-th checker of n is drawn, in the viewer's numbering of places: 1..24 points,
 * 25 the viewer's bar (upper half), -26 the opponent's bar, 0 the viewer's tray (bottom),
 * -1 the opponent's tray.
 */
function spot(G, q, k, n) {
  const half = G.H / 2, barX = BX + BARW / 2, st = slabStep(G);
  if (q >= 1 && q <= 24) return [pointX(q) + P / 2, stackY(G, q, k, n)];
  if (q === 25) return [barX, half - 50 - k * 16];
  if (q === -26) return [barX, half + 50 + k * 16];
  if (q === 0) return [TX + TW / 2, G.H - F - 4 - (k + 1) * st + st / 2];
  return [TX + TW / 2, F + 4 + k * st + st / 2];
}

function checker(cx, cy, seat, cls = "") {
  return s("g", { class: `checker c${seat} ${cls}` },
    s("circle", { cx, cy, r: R, fill: `url(#chk${seat})`, class: "chk-body" }),
    s("circle", { cx, cy, r: R * 0.62, class: "chk-ring" }));
}

/** Text centred on (x, y) that reads upright whichever way the board is turned. */
function label(G, x, y, attrs, text) {
  return s("text", { x, y, "dominant-baseline": "central",
    transform: G.tall ? `rotate(-90 ${x} ${y})` : null, ...attrs }, text);
}

function die(x, y, size, value, seat, cls) {
  const g = s("g", { class: `die d${seat} ${cls}`, "data-die": value });
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

/** A roll drawn on a player's right-hand half: `left` the dice still to play (null: all). */
function drawDice(svg, G, dice, seat, v, left, cls) {
  const cx = (seat === v ? RX : LX) + 3 * P;
  const values = dice[0] === dice[1] ? [dice[0], dice[0], dice[0], dice[0]] : dice.slice();
  const rest = left ? left.slice() : values.slice();
  const size = values.length === 4 ? G.DIE * 0.83 : G.DIE, gap = 10;
  const total = values.length * size + (values.length - 1) * gap;
  values.forEach((d, i) => {
    const j = rest.indexOf(d);
    if (j >= 0) rest.splice(j, 1);
    svg.append(die(cx - total / 2 + i * (size + gap), G.H / 2 - size / 2, size, d, seat,
      `${cls}${j < 0 ? " used" : ""}`));
  });
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

/** The latest play in the history (cube actions and rolls after it do not hide it):
 * {index, seat, play} or null; null too once a match's next game has begun (a play of the
 * game before is not on this board). */
function lastPlay(room) {
  const hist = room.history;
  const ends = gameEnds(hist, room.rolls);
  const rolledAt = new Set((room.rolls || []).map((r) => r.ply));
  for (let i = hist.length - 1; i >= 0; i--) {
    if (ends.has(i) && rolledAt.has(i + 1)) return null;  // the next game's opening roll
    if (hist[i].play) {
      return { index: i, seat: historySeats("backgammon", hist, room.rolls)[i], play: hist[i].play };
    }
  }
  return null;
}

/** A place of the mover's numbering in the viewer's (see spot). */
function viewPlace(m, v, p) {
  if (m === v) return p;
  return p === 25 ? -26 : p === 0 ? -1 : 25 - p;
}

/**
 * The moves that animate a play just made: each checker (several steps of one checker
 * are one path) slides from where it was, point by point, one checker after the other;
 * a checker it hits goes to the bar as it lands. Keys name the drawn checker that ends
 * each path ("place:k").
 */
function playMoves(G, last, v, prev, count) {
  const m = last.seat;
  const chains = [];
  for (const [f, t] of last.play) {
    const c = chains.find((ch) => ch.open && ch.places[ch.places.length - 1] === f);
    if (c) { c.places.push(t); c.steps.push([f, t]); } else chains.push({ places: [f, t], steps: [[f, t]], open: true });
    if (t === 0) chains[chains.length - 1].open = false;
  }
  const hitBar = m === v ? -26 : 25;
  const blots = prev && prev.board ? prev.board[1 - m].slice() : null;
  const used = new Map();
  const take = (q) => {
    const k = (used.get(q) || 0) + 1;
    used.set(q, k);
    return count(q) - k;
  };
  const moves = [];
  let t = 0;
  // Later arrivals lie on top, so the top checkers are given out from the last path back.
  const ends = chains.map((c) => viewPlace(m, v, c.places[c.places.length - 1]));
  const index = new Array(chains.length);
  for (let j = chains.length - 1; j >= 0; j--) index[j] = take(ends[j]);
  const hits = [];
  chains.forEach((c, j) => {
    const places = c.places.map((p) => viewPlace(m, v, p));
    const path = places.map((q, i) => (i === places.length - 1
      ? spot(G, q, index[j], count(q))
      : spot(G, q, count(q), count(q) + 1)));
    const ms = HOP_MS * (places.length - 1);
    moves.push({ key: `${ends[j]}:${index[j]}`, path, start: t, ms });
    c.steps.forEach(([, to], i) => {
      if (blots && to >= 1 && to <= 24 && blots[25 - to] === 1) {
        blots[25 - to] = 0;
        const q = viewPlace(m, v, to);
        hits.push({ from: spot(G, q, 0, 1), at: t + HOP_MS * (i + 1) });
      }
    });
    t += ms;
  });
  hits.forEach((hit, i) => {
    const k = count(hitBar) - hits.length + i;
    if (k < 0) return;
    moves.push({ key: `${hitBar}:${k}`, path: [hit.from, spot(G, hitBar, k, count(hitBar))], start: hit.at, ms: HOP_MS });
  });
  return moves;
}

function animate(placed, run) {
  const elapsed = Date.now() - run.t0;
  for (const mv of run.moves) {
    const el = placed.get(mv.key);
    if (!el || !el.animate || elapsed >= mv.start + mv.ms) continue;
    const [ex, ey] = mv.path[mv.path.length - 1];
    const frames = mv.path.map(([x, y]) => ({ transform: `translate(${x - ex}px, ${y - ey}px)` }));
    const a = el.animate(frames, { duration: mv.ms, delay: mv.start, easing: "ease-in-out", fill: "backwards" });
    a.currentTime = elapsed;
    el.classList.add("moving");
  }
}

export function render(ctx) {
  const { room, ui } = ctx;
  const G = phone && phone.matches ? TALL : WIDE;
  const H = G.H, HALF = H / 2, TRI = G.TRI;
  redraw = ctx.rerender;
  const st = room.state;
  const v = ctx.viewSeat;
  const b = builderFor(ctx, v);
  const me = b ? b.me : st.board[v];
  const opp = b ? b.opp : st.board[1 - v];
  const sources = b ? new Set(b.sources()) : new Set();
  if (ui.sel !== null && ui.sel !== undefined && !sources.has(ui.sel)) ui.sel = null;
  const dests = b && ui.sel !== null && ui.sel !== undefined ? b.destinations(ui.sel) : new Map();
  const mover = st.turn;
  const mine = room.your_seats || [];

  // The last play, in the viewer's numbering, until the next one is being built.
  const last = lastPlay(room);
  const lastFrom = new Set(), lastTo = new Set();
  if (last && !(b && b.steps.length)) {
    for (const [f, t] of last.play) { lastFrom.add(viewPlace(last.seat, v, f)); lastTo.add(viewPlace(last.seat, v, t)); }
  }

  const svg = s("svg", { viewBox: G.tall ? `0 0 ${H} ${W}` : `0 0 ${W} ${H}`,
    class: `board bg${G.tall ? " tall" : ""}`, "aria-label": t("board.backgammon") });
  svg.append(defs());
  // Everything is drawn lying down; a tall board turns it a quarter clockwise.
  const root = s("g", { class: "bg-root", transform: G.tall ? `translate(${H} 0) rotate(90)` : null });
  svg.append(root);
  root.append(s("rect", { x: 0, y: 0, width: W, height: H, rx: 14, fill: "url(#wood)", class: "bg-frame" }));
  root.append(s("rect", { x: 0, y: 0, width: W, height: H, rx: 14, fill: "url(#grain)", class: "bg-grain" }));
  for (const x of [LX, RX]) {
    root.append(s("rect", { x, y: F, width: 6 * P, height: H - 2 * F, fill: "url(#felt)", class: "felt" }));
  }
  root.append(s("rect", { x: BX, y: F - 4, width: BARW, height: H - 2 * F + 8, class: "bar" }));
  root.append(s("rect", { x: TX, y: F, width: TW, height: TRI + 5, rx: 6, class: "tray" }));
  root.append(s("rect", { x: TX, y: H - F - TRI - 5, width: TW, height: TRI + 5, rx: 6, class: "tray" }));

  // Points.
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p), top = isTop(p);
    const tipY = top ? F + TRI : H - F - TRI;
    const baseY = top ? F : H - F;
    const cls = ["point", p % 2 ? "pt-a" : "pt-b"];
    if (lastTo.has(p)) cls.push("last-to");
    if (lastFrom.has(p)) cls.push("last-from");
    root.append(s("polygon", { points: `${x + 2},${baseY} ${x + P - 2},${baseY} ${x + P / 2},${tipY}`,
      class: cls.join(" "), "data-pt": p }));
    root.append(label(G, x + P / 2, top ? F / 2 : H - F / 2, { class: "pt-num" }, String(p)));
  }

  // Checkers, each drawn one registered under its place and height ("place:k").
  const placed = new Map();
  const counts = new Map();
  const put = (q, k, el) => { placed.set(`${q}:${k}`, el); root.append(el); };
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p) + P / 2;
    let seat = null, n = 0;
    if (me[p] > 0) { seat = v; n = me[p]; }
    else if (opp[25 - p] > 0) { seat = 1 - v; n = opp[25 - p]; }
    counts.set(p, n);
    for (let k = 0; k < n; k++) {
      const cls = [];
      if (k === n - 1 && seat === v) {
        if (sources.has(p)) cls.push("can-move");
        if (ui.sel === p) cls.push("selected");
      }
      put(p, k, checker(x, stackY(G, p, k, n), seat, cls.join(" ")));
    }
    if (n > 5) {
      const y = stackY(G, p, n - 1, n);
      root.append(label(G, x, y, { class: `stack-count c${seat}` }, String(n)));
    }
  }

  // The bar: the viewer's checkers in the upper half, the opponent's in the lower half.
  const barX = BX + BARW / 2;
  const barStack = (q, n, seat, mineBar) => {
    counts.set(q, n);
    for (let k = 0; k < n; k++) {
      const cls = [];
      if (mineBar && k === n - 1) {
        if (sources.has(25)) cls.push("can-move");
        if (ui.sel === 25) cls.push("selected");
      }
      const [x, y] = spot(G, q, k, n);
      put(q, k, checker(x, y, seat, cls.join(" ")));
    }
    if (n > 1) {
      const [x, y] = spot(G, q, n - 1, n);
      root.append(label(G, x, y, { class: `stack-count c${seat}` }, String(n)));
    }
  };
  barStack(25, me[25], v, true);
  barStack(-26, opp[25], 1 - v, false);
  if (lastFrom.has(25) || lastFrom.has(-26)) {
    root.append(s("rect", { x: BX + 3, y: lastFrom.has(25) ? F : HALF, width: BARW - 6, height: HALF - F, class: "last-bar" }));
  }

  // Borne-off trays: the viewer's at the bottom, the opponent's at the top.
  const tray = (q, n, seat) => {
    counts.set(q, n);
    const step = slabStep(G);
    for (let k = 0; k < n; k++) {
      const [, cy] = spot(G, q, k, n);
      put(q, k, s("rect", { x: TX + 6, y: cy - (step - 2) / 2, width: TW - 12, height: step - 2, rx: 3, class: `slab c${seat}` }));
    }
  };
  tray(0, me[0], v);
  tray(-1, opp[0], 1 - v);

  // Pip counts on the bar.
  root.append(label(G, barX, H - F - 12, { class: "pip-label", id: "pip-me" }, String(pips(me))));
  root.append(label(G, barX, F + 10, { class: "pip-label", id: "pip-opp" }, String(pips(opp))));

  // The cube shows the stake as it is; a double on offer is a second cube, on the doubler's
  // half, with the stake asked for.
  const cube = st.cube || { value: 1, owner: null, enabled: false };
  if (cube.enabled) {
    const cy = cube.owner === null || cube.owner === undefined ? HALF : cube.owner === v ? HALF + 26 : HALF - 26;
    const g = s("g", { class: "cube", "data-owner": cube.owner === null ? "center" : cube.owner });
    g.append(s("rect", { x: TX + TW / 2 - 19, y: cy - 19, width: 38, height: 38, rx: 6, class: "cube-body" }));
    g.append(label(G, TX + TW / 2, cy, { class: "cube-text" }, String(cube.value === 1 ? 64 : cube.value)));
    root.append(g);
    if (st.phase === "take") {
      const cx = (mover === v ? RX : LX) + 3 * P;
      const o = s("g", { class: "cube-offer", "data-value": cube.value * 2 });
      o.append(s("rect", { x: cx - 24, y: HALF - 24, width: 48, height: 48, rx: 8, class: "cube-body offer" }));
      o.append(label(G, cx, HALF, { class: "cube-text offer" }, String(cube.value * 2)));
      // Under the cube as the board is seen (lying down: down the depth; turned: along it).
      o.append(label(G, G.tall ? cx + 40 : cx, G.tall ? HALF : HALF + 40, { class: "offer-note" },
        t("bg.doublesToQ", { cube: cube.value * 2 })));
      root.append(o);
    }
  }

  // Dice: the roll being played on its player's right-hand half; the roll of the latest play
  // stays on its player's half until that player rolls again, so a bot's roll is seen.
  const playing = st.dice && st.phase === "move";
  if (playing) drawDice(root, G, st.dice, mover, v, b ? b.diceLeft : null, ctx.fresh ? "rolled" : "");
  if (last && !(playing && mover === last.seat)) {
    const dice = playDice(room.rolls, last.index);
    if (dice) drawDice(root, G, dice, last.seat, v, null, "last-roll");
  }

  // A play someone else just made is shown moving, checker by checker.
  const fresh = ctx.fresh && last && last.index === room.history.length - 1 && !mine.includes(last.seat);
  if (fresh) {
    anim = { roomId: room.room_id, index: last.index, G, t0: Date.now(),
      moves: playMoves(G, last, v, ctx.prev, (q) => counts.get(q) || 0) };
  }
  // A newer play, another room, the player's own steps or a turned phone end it.
  if (anim && (anim.roomId !== room.room_id || !last || anim.index !== last.index ||
      anim.G !== G || (b && b.steps.length))) anim = null;
  if (anim) animate(placed, anim);

  // Click targets (on top of everything).
  const target = (p, x, y, w, hh, text) => {
    const hot = sources.has(p) || dests.has(p);
    const r = s("rect", { x, y, width: w, height: hh, class: `hit${dests.has(p) ? " dest" : ""}${sources.has(p) ? " src" : ""}`,
      "data-point": p });
    if (hot || (ui.sel !== null && ui.sel !== undefined)) {
      clickable(r, text, () => onPoint(ctx, b, p, dests));
    }
    root.append(r);
  };
  if (b) {
    for (let p = 1; p <= 24; p++) {
      const x = pointX(p);
      target(p, x, isTop(p) ? F : H - F - TRI - 20, P, TRI + 20, t("board.point", { n: p }));
      if (dests.has(p)) {
        const top = isTop(p);
        root.append(s("circle", { cx: x + P / 2, cy: top ? F + TRI + 12 : H - F - TRI - 12, r: 7, class: "dest-dot" }));
      }
    }
    target(25, BX, F, BARW, HALF - F, "bar");
    target(0, TX, H - F - TRI - 5, TW, TRI + 5, t("board.bearOff"));
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

/** A match's standing, or null in a money game: "Match to 5 · 2–1 · Crawford game". */
export function matchText(st, shown = null) {
  if (!st || !st.match_to) return null;
  const score = shown || st.score || [0, 0];
  const parts = [t("lobby.matchTo", { count: st.match_to }), `${score[0]}–${score[1]}`];
  if (st.crawford) parts.push(t("bg.crawford"));
  else if (st.game_number > 1 && st.phase !== "over") parts.push(t("bg.gameN", { n: st.game_number }));
  return parts.join(" · ");
}

/** What the review says of a position besides its board: a match's standing. */
export function stateNote(st) {
  return matchText(st);
}

function controls(ctx, b) {
  const { room, canMove, ui } = ctx;
  const st = room.state;
  const box = h("div", { class: "bg-controls" });
  const score = matchScore(room);
  const match = matchText(st, score);
  if (match) {
    box.append(h("span", { class: `match-score${st.crawford ? " crawford" : ""}`, id: "match-score",
      "data-score": score.join("-"), "data-crawford": st.crawford ? "1" : "0" }, match));
    const last = st.last_game;
    if (last && st.phase !== "over" && room.status === "playing" && st.game_number > 1) {
      box.append(h("span", { class: "hint", id: "last-game" },
        t("bg.lastGame", { side: pieceName("backgammon", last.winner), count: last.points, why: reasonText(last.reason) })));
    }
  }
  if (!canMove) {
    if (st.phase === "take") box.append(h("span", { class: "hint" }, t("bg.doubledWaiting", { cube: st.cube.value * 2 })));
    return box;
  }
  const legal = (a) => room.legal_moves.some((m) => m.action === a);
  if (legal("roll") || legal("double")) {
    if (legal("roll")) box.append(h("button", { class: "btn primary", id: "roll-btn", on: { click: () => ctx.send({ action: "roll" }) } }, t("bg.roll")));
    if (legal("double")) box.append(h("button", { class: "btn", id: "double-btn", on: { click: () => ctx.send({ action: "double" }) } }, t("bg.doubleTo", { cube: st.cube.value * 2 })));
    box.append(h("span", { class: "hint" }, t("bg.rToRoll")));
  }
  if (legal("take") || legal("drop")) {
    box.append(h("span", { class: "hint strong" }, t("bg.opponentDoubles", { cube: st.cube.value * 2 })));
    box.append(h("button", { class: "btn primary", id: "take-btn", on: { click: () => ctx.send({ action: "take" }) } }, t("bg.take")));
    box.append(h("button", { class: "btn danger", id: "drop-btn", on: { click: () => ctx.send({ action: "drop" }) } }, t("bg.drop")));
  }
  if (b) {
    const done = b.complete();
    const noMove = room.legal_moves.length === 1 && room.legal_moves[0].play && !room.legal_moves[0].play.length;
    if (noMove) {
      box.append(h("span", { class: "hint strong" }, t("bg.noLegal")));
      box.append(h("button", { class: "btn primary", id: "play-btn", on: { click: () => ctx.send({ play: [] }) } }, t("bg.pass")));
      return box;
    }
    box.append(h("button", { class: "btn", id: "undo-btn", disabled: !b.steps.length,
      on: { click: () => { b.undo(); ui.sel = null; ctx.rerender(); } } }, t("bg.undo")));
    box.append(h("button", { class: `btn primary${done && b.exhausted() ? " pulse" : ""}`, id: "play-btn",
      disabled: !done, on: { click: () => sendPlay(ctx, b) } }, t("bg.playIt")));
    const steps = b.steps.map((x) => `${x.step[0] === 25 ? t("bg.bar") : x.step[0]}/${x.step[1] === 0 ? t("bg.off") : x.step[1]}`).join(" ");
    box.append(h("span", { class: "hint", id: "partial" }, steps || t("bg.howToPlay")));
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
  const legal = (a) => room.legal_moves.some((m) => m.action === a);
  if ((ev.key === "r" || ev.key === "R") && legal("roll")) { ctx.send({ action: "roll" }); return true; }
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
  const st = room.state;
  const p = st.pips;
  const side = pieceName("backgammon", seat);
  const base = p ? t("bg.cardPips", { side, pips: p[seat] }) : side;
  return st.match_to ? t("bg.cardScore", { base, score: matchScore(room)[seat], to: st.match_to }) : base;
}
