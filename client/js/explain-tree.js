// The search tree as an SVG picture in the lesson's style: MAX nodes are triangles pointing up,
// MIN nodes triangles pointing down, chance nodes circles, leaves boxes holding their values.
// The layout is the classic tidy one: leaves side by side in the order searched, each parent
// centred over its children. `TreeView.show(step)` replays the search up to its step-th node.
import { s, clear } from "./dom.js";
import { t } from "./i18n.js";

// How the tree's JSON says a value is a proof (its `proof`: the score of a win at once, and the
// least score that is a proof), or null when no value is one.
let proof = null;
const R = 13;          // node radius
const SLOT = 40;       // horizontal room per leaf
const LEVEL = 66;      // vertical distance between levels
const PAD = 30;
const MIN_READABLE = 0.3;  // below this scale the values cannot be read
const READABLE = 1;        // the scale a too wide tree is first shown at

/** A value as the CLI writes it: W3/L3 for a win/loss in 3 plies, 3 decimals at most. */
export function valueText(v) {
  if (v === null || v === undefined) return "·";
  if (v === Infinity) return "+∞";
  if (v === -Infinity) return "-∞";
  if (proof && Math.abs(v) >= proof.proven_min) return `${v > 0 ? "W" : "L"}${proof.win - Math.abs(Math.trunc(v))}`;
  if (Number.isInteger(v)) return String(v);
  return v.toFixed(3).replace(/\.?0+$/, "");
}

export function windowText(n) {
  return `[${n.alpha === null ? "-∞" : valueText(n.alpha)}, ${n.beta === null ? "+∞" : valueText(n.beta)}]`;
}

// i18n-keys: explain.kind.max explain.kind.min explain.kind.chance explain.kind.leaf
const kindName = (kind) => t(`explain.kind.${kind}`);

/** Flattens the tree (display order), with parents, levels, positions and, per node, the last
 * visit number in its subtree (a node has returned its value once the search went past it). */
function prepare(root) {
  const recs = [];
  let leaves = 0;
  const walk = (n, parent, level) => {
    const rec = { n, parent, level, kids: [], x: 0, y: PAD + R + level * LEVEL, last: n.visit || 0, el: null, edge: null };
    recs.push(rec);
    for (const c of n.children) {
      const cr = walk(c, rec, level + 1);
      rec.kids.push(cr);
      rec.last = Math.max(rec.last, cr.last);
    }
    if (rec.kids.length) rec.x = (rec.kids[0].x + rec.kids[rec.kids.length - 1].x) / 2;
    else rec.x = PAD + SLOT / 2 + SLOT * leaves++;
    return rec;
  };
  walk(root, null, 0);
  const depth = Math.max(...recs.map((r) => r.level));
  // Room under the lowest leaves for their vertical move texts.
  let below = 0;
  for (const r of recs) {
    const text = r.n.move_text;
    if (!r.kids.length && text && text.length > LONG) below = Math.max(below, r.y + R + 6 + text.length * CHAR_W);
  }
  const height = Math.max(PAD * 2 + 2 * R + depth * LEVEL + 24, below + PAD);
  // Room on the right for the window written beside the last node.
  return { recs, width: PAD * 2 + SLOT * Math.max(1, leaves) + 70, height };
}

function shape(kind, x, y) {
  if (kind === "max") {
    return s("polygon", { class: "ex-shape", points: `${x},${y - R} ${x + R * 1.15},${y + R * 0.85} ${x - R * 1.15},${y + R * 0.85}` });
  }
  if (kind === "min") {
    return s("polygon", { class: "ex-shape", points: `${x - R * 1.15},${y - R * 0.85} ${x + R * 1.15},${y - R * 0.85} ${x},${y + R}` });
  }
  if (kind === "chance") return s("circle", { class: "ex-shape", cx: x, cy: y, r: R });
  return s("rect", { class: "ex-shape", x: x - R * 1.25, y: y - R * 0.8, width: R * 2.5, height: R * 1.6, rx: 2 });
}

const TEXT_DY = { max: 0.5, min: -0.05, chance: 0.3, leaf: 0.3 };
const LONG = 4;          // longer move texts are written vertically
const CHAR_W = 4.9;      // their width per character at the long labels' size

/** A move's text by the node it leads to: short ones above it; long ones (backgammon plays)
 * vertical, below a leaf where there is room, else up along the incoming edge. */
function moveLabel(n, r, top) {
  const text = n.move_text;
  if (text.length <= LONG) return s("text", { class: "ex-move", x: r.x, y: top - 4 }, text);
  if (!n.children.length) {
    const x = r.x + 3, y = r.y + R + 4;
    return s("text", { class: "ex-move long", x, y, transform: `rotate(90 ${x} ${y})` }, text);
  }
  const x = r.x - R - 3, y = top;
  return s("text", { class: "ex-move long", x, y, transform: `rotate(-90 ${x} ${y})` }, text);
}

export class TreeView {
  constructor(holder) {
    this.holder = holder;
    this.svg = null;
    this.data = null;
    this.recs = [];
    this.byVisit = [];
    this.step = 0;
    this.vb = null;
    this.bounds = null;
    this._wirePanZoom();
  }

  /** Draws a new tree (the contract's JSON); then call show(step). */
  setTree(data) {
    this.data = data;
    proof = data.proof;
    const { recs, width, height } = prepare(data.root);
    this.recs = recs;
    this.bounds = { x: 0, y: 0, w: width, h: height };
    this.byVisit = [];
    for (const r of recs) if (r.n.visit !== null) this.byVisit[r.n.visit] = r;
    const svg = s("svg", { class: "ex-tree", role: "img",
      "aria-label": t("explain.treeAria", { count: recs.length }), preserveAspectRatio: "xMidYMid meet" });
    const edges = s("g", { class: "ex-edges" });
    const nodes = s("g", { class: "ex-nodes" });
    for (const r of recs) {
      const n = r.n;
      if (r.parent) {
        const p = r.parent;
        const y0 = p.y + (p.n.kind === "max" ? R * 0.85 : R), y1 = r.y - (n.kind === "min" ? R * 0.85 : R);
        const g = s("g", { class: "ex-edge", "data-to": n.id },
          s("line", { x1: p.x, y1: y0, x2: r.x, y2: y1 }));
        if (n.move_text !== null) g.append(moveLabel(n, r, y1));
        g.append(s("text", { class: "ex-cut", x: (p.x + r.x) / 2, y: (y0 + y1) / 2 + 4 }, "✂"));
        edges.append(g);
        r.edge = g;
      }
      const label = s("text", { class: "ex-val", x: r.x, y: r.y + R * TEXT_DY[n.kind] + 3.5 }, "");
      const title = s("title", {}, "");
      const g = s("g", {
        class: `ex-node k-${n.kind}`,
        "data-node-id": n.id,
        "data-kind": n.kind,
        "data-value": n.value === null ? "" : String(n.value),
        "data-visit": n.visit === null ? "" : String(n.visit),
        transform: null,
      }, shape(n.kind, r.x, r.y), label, title);
      if (n.kind === "leaf" && n.visit === null) g.classList.add("never");
      r.el = g;
      r.label = label;
      r.title = title;
      nodes.append(g);
    }
    const overlay = s("g", { class: "ex-overlay" });
    this.ring = s("circle", { class: "ex-ring", r: R + 7, cx: -100, cy: -100 });
    this.windowLabel = s("text", { class: "ex-window", x: -100, y: -100 }, "");
    overlay.append(this.ring, this.windowLabel);
    svg.append(s("rect", { class: "ex-bg", x: -5000, y: -5000, width: width + 10000, height: height + 10000 }), edges, nodes, overlay);
    clear(this.holder);
    this.holder.append(svg);
    this.svg = svg;
    this.fit();
  }

  get total() { return this.data ? this.data.visited : 0; }

  current() { return this.byVisit[this.step] || null; }

  /** The picture after the search has entered `step` nodes (0: before it starts). */
  show(step) {
    if (!this.data) return;
    this.step = Math.max(0, Math.min(this.total, step));
    const k = this.step, end = k === this.total;
    const entered = (r) => r.n.visit !== null && r.n.visit <= k;
    const done = (r) => entered(r) && (!r.kids.length || k > r.last || end);
    const cur = this.current();
    const onPath = new Set();
    for (let r = cur; r; r = r.parent) onPath.add(r);
    for (const r of this.recs) {
      const n = r.n;
      const isDone = done(r), isIn = entered(r);
      // A node the search will never enter is shown as pruned once its parent has returned.
      const pruned = n.visit === null && (end || (r.parent && (done(r.parent) || r.parent.pruned)));
      r.pruned = pruned;
      const cl = r.el.classList;
      cl.toggle("entered", isIn);
      cl.toggle("done", isDone);
      cl.toggle("active", isIn && !isDone);
      cl.toggle("pending", !isIn && !pruned);
      cl.toggle("pruned", !!pruned);
      cl.toggle("current", r === cur);
      cl.toggle("on-path", onPath.has(r));
      cl.toggle("pv", end && n.best);
      let text = "";
      if (n.kind === "leaf") text = valueText(n.static);
      else if (isDone) text = valueText(n.value);
      else if (isIn) text = this._soFar(r, done);
      r.label.textContent = text;
      r.label.classList.toggle("small", text.length > 4);
      r.title.textContent = this._describe(r);
      if (r.edge) {
        const e = r.edge.classList;
        e.toggle("entered", isIn);
        e.toggle("pruned", !!pruned);
        e.toggle("pv", end && n.best && r.parent.n.best);
        // The scissors go on the first edge a cut skipped.
        const first = pruned && r.parent.n.visit !== null && r.parent.kids.find((c) => c.n.visit === null) === r;
        e.toggle("cut", !!first);
      }
    }
    if (cur) {
      this.ring.setAttribute("cx", cur.x);
      this.ring.setAttribute("cy", cur.y);
      const w = this.data.algorithm === "alphabeta" ? `α,β ${windowText(cur.n)}` : "";
      this.windowLabel.textContent = w;
      this.windowLabel.setAttribute("x", cur.x + R * 1.6);
      this.windowLabel.setAttribute("y", cur.y - R * 0.6);
      this._keepInView(cur);
    } else {
      this.ring.setAttribute("cx", -100);
      this.windowLabel.textContent = "";
    }
  }

  _soFar(r, done) {
    const vals = r.kids.filter(done).map((c) => c.n.value);
    if (!vals.length || r.n.kind === "chance") return "?";
    return r.n.kind === "max" ? `≥${valueText(Math.max(...vals))}` : `≤${valueText(Math.min(...vals))}`;
  }

  _describe(r) {
    const n = r.n;
    const parts = [`${kindName(n.kind)} #${n.id}`, t("explain.pathLine", { path: this.path(r).join(" › ") || t("explain.theRoot") })];
    if (n.probability !== null) parts.push(t("explain.probability", { v: valueText(n.probability) }));
    if (n.static !== null) parts.push(t("explain.static", { v: valueText(n.static) }));
    if (n.visit === null) parts.push(t("explain.neverVisited"));
    else {
      parts.push(t("explain.visitValue", { visit: n.visit, v: valueText(n.value) }));
      if (this.data.algorithm === "alphabeta") parts.push(t("explain.windowLine", { window: windowText(n) }));
    }
    return parts.join("\n");
  }

  path(r) {
    const out = [];
    for (let x = r; x && x.parent; x = x.parent) out.unshift(x.n.move_text);
    return out;
  }

  // --- zoom and pan ---------------------------------------------------------------------

  fit() {
    if (!this.bounds) return;
    // As tall as the tree needs at the width there is, so a wide tree leaves no empty band.
    const width = this.holder.clientWidth || 800;
    const most = Math.max(320, window.innerHeight - 250);
    const tall = Math.max(260, Math.min(most, (width * this.bounds.h) / this.bounds.w));
    this.holder.style.height = `${Math.round(tall)}px`;
    this.vb = { ...this.bounds };
    this._applyView();
  }

  /** The first view of a tree: all of it, unless that would make the nodes too small to
   * read; then a readable part around the root (Fit shows all). */
  home() {
    this.fit();
    const rect = this.holder.getBoundingClientRect();
    if (!rect.width || Math.min(rect.width / this.bounds.w, rect.height / this.bounds.h) >= MIN_READABLE) return;
    const tall = Math.min(Math.max(320, window.innerHeight - 250), this.bounds.h * READABLE);
    this.holder.style.height = `${Math.round(tall)}px`;
    const w = rect.width / READABLE, h = tall / READABLE;
    this.vb = { x: this.recs[0].x - w / 2, y: 0, w, h };
    this._applyView();
  }

  zoom(factor, cx, cy) {
    if (!this.vb) return;
    const vb = this.vb;
    const px = cx === undefined ? vb.x + vb.w / 2 : cx, py = cy === undefined ? vb.y + vb.h / 2 : cy;
    const minW = 120, maxW = this.bounds.w * 4;
    const f = Math.max(minW / vb.w, Math.min(maxW / vb.w, factor));
    this.vb = { x: px - (px - vb.x) * f, y: py - (py - vb.y) * f, w: vb.w * f, h: vb.h * f };
    this._applyView();
  }

  _applyView() {
    const { x, y, w, h } = this.vb;
    this.svg.setAttribute("viewBox", `${x} ${y} ${w} ${h}`);
  }

  /** Units of the picture per screen pixel, as "meet" scales the view box into the box. */
  _unitsPerPixel() {
    const rect = this.svg.getBoundingClientRect();
    return Math.max(this.vb.w / Math.max(1, rect.width), this.vb.h / Math.max(1, rect.height));
  }

  _toPicture(clientX, clientY) {
    const m = this.svg.getScreenCTM();
    if (!m) return { x: this.vb.x, y: this.vb.y };
    const p = new DOMPoint(clientX, clientY).matrixTransform(m.inverse());
    return { x: p.x, y: p.y };
  }

  _keepInView(r) {
    // Zoomed in: a node outside the view is brought to its middle, so stepping can be followed.
    const vb = this.vb, m = R * 2;
    const outX = r.x - m < vb.x || r.x + m > vb.x + vb.w, outY = r.y - m < vb.y || r.y + m > vb.y + vb.h;
    if (outX || outY) {
      this.vb = { ...vb, x: outX ? r.x - vb.w / 2 : vb.x, y: outY ? r.y - vb.h / 2 : vb.y };
      this._applyView();
    }
  }

  _wirePanZoom() {
    const holder = this.holder;
    holder.addEventListener("wheel", (ev) => {
      if (!this.svg) return;
      ev.preventDefault();
      const p = this._toPicture(ev.clientX, ev.clientY);
      this.zoom(Math.exp(ev.deltaY * 0.0015), p.x, p.y);
    }, { passive: false });
    let drag = null;
    holder.addEventListener("pointerdown", (ev) => {
      if (!this.svg || ev.button !== 0) return;
      drag = { x: ev.clientX, y: ev.clientY, vb: { ...this.vb }, upp: this._unitsPerPixel(), moved: false };
      holder.setPointerCapture(ev.pointerId);
    });
    holder.addEventListener("pointermove", (ev) => {
      if (!drag) return;
      const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      this.vb = { ...drag.vb, x: drag.vb.x - dx * drag.upp, y: drag.vb.y - dy * drag.upp };
      this._applyView();
    });
    const end = (ev) => {
      if (drag && holder.hasPointerCapture(ev.pointerId)) holder.releasePointerCapture(ev.pointerId);
      drag = null;
    };
    holder.addEventListener("pointerup", end);
    holder.addEventListener("pointercancel", end);
  }

  // --- saving ---------------------------------------------------------------------------

  /** The whole picture as a standalone SVG file's text, with the tree's styles inside. */
  svgText() {
    const clone = this.svg.cloneNode(true);
    const { w, h } = this.bounds;
    clone.setAttribute("viewBox", `0 0 ${w} ${h}`);
    clone.setAttribute("width", w);
    clone.setAttribute("height", h);
    let css = "";
    for (const sheet of document.styleSheets) {
      let rules;
      try { rules = sheet.cssRules; } catch { continue; }
      for (const rule of rules) {
        if (rule.selectorText && rule.selectorText.includes(".ex-tree")) css += rule.cssText + "\n";
      }
    }
    const style = document.createElementNS("http://www.w3.org/2000/svg", "style");
    style.textContent = css;
    clone.insertBefore(style, clone.firstChild);
    return new XMLSerializer().serializeToString(clone);
  }
}
