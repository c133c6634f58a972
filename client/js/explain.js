// The explain page (/explain): asks /api/explain for a search tree, draws it and steps through
// the search. Its parameters live in the URL (the API's names), so a view can be shared.
import { h, clear, $ } from "./dom.js";
import { START, hasBoard, renderBoard } from "./explain-board.js";
import { TreeView, valueText, windowText } from "./explain-tree.js";
import { t, tParts, onLanguageChange } from "./i18n.js";

const PARAMS = ["game", "position", "dice", "algorithm", "depth", "order", "branching", "seed"];
const ORDERS = ["left", "right", "best", "worst"];
const ROLLS = [];
for (let a = 6; a >= 1; a--) for (let b = a; b >= 1; b--) ROLLS.push(`${a}${b}`);
const PLAY_MS = 650;

const view = new TreeView($("#ex-view"));
let params = {};       // the shown tree's parameters, as in the URL
let data = null;       // the shown tree (the contract's JSON)
let loadToken = 0;     // answers to an older request are dropped
let timer = null;      // the play button's interval
const undo = [];       // earlier positions typed or clicked, for the Undo button

// --- parameters: URL <-> controls -----------------------------------------------------------

function fromUrl() {
  const q = new URLSearchParams(location.search);
  const p = {};
  for (const k of PARAMS) if (q.has(k)) p[k] = q.get(k);
  if (!p.game) p.game = "random";
  if (p.game === "random" && p.seed === undefined) p.seed = String(Math.floor(Math.random() * 10000));
  return p;
}

function toQuery(p) {
  const q = new URLSearchParams();
  for (const k of PARAMS) if (p[k] !== undefined && p[k] !== "") q.set(k, p[k]);
  return q.toString();
}

const ctl = (id) => document.getElementById(id);

function fillControls(p) {
  ctl("ex-game").value = p.game;
  ctl("ex-position").value = p.position ?? (START[p.game] ?? "");
  ctl("ex-dice").value = p.dice ?? "";
  ctl("ex-depth").value = p.depth ?? "";
  ctl("ex-algorithm").value = p.algorithm ?? "alphabeta";
  ctl("ex-order").value = p.order ?? "left";
  ctl("ex-branching").value = p.branching ?? "";
  ctl("ex-seed").value = p.seed ?? "";
  syncFields();
}

function readControls() {
  const game = ctl("ex-game").value;
  const p = { game };
  const put = (k, v) => { if (v !== "" && v !== null && v !== undefined) p[k] = String(v).trim(); };
  if (game === "random") {
    put("branching", ctl("ex-branching").value);
    put("seed", ctl("ex-seed").value);
  } else {
    // The empty position is Connect-4's and BOOM's start; the API takes an absent one as the start.
    put("position", ctl("ex-position").value);
    if (game === "backgammon") put("dice", ctl("ex-dice").value);
  }
  put("depth", ctl("ex-depth").value);
  if (ctl("ex-algorithm").value !== "alphabeta") p.algorithm = ctl("ex-algorithm").value;
  if (ctl("ex-order").value !== "left") p.order = ctl("ex-order").value;
  return p;
}

function syncFields() {
  const game = ctl("ex-game").value;
  for (const el of document.querySelectorAll(".ex-only-random")) el.hidden = game !== "random";
  for (const el of document.querySelectorAll(".ex-only-game")) el.hidden = game === "random";
  for (const el of document.querySelectorAll(".ex-only-dice")) el.hidden = game !== "backgammon";
  ctl("ex-depth").placeholder = game === "backgammon" ? "1" : "3";
  drawBoard();
}

function drawBoard() {
  const holder = ctl("ex-board");
  clear(holder);
  const game = ctl("ex-game").value;
  if (!hasBoard(game)) return;
  holder.append(renderBoard(game, ctl("ex-position").value, (next) => setPosition(next)));
}

function setPosition(text) {
  undo.push(ctl("ex-position").value);
  ctl("ex-position").value = text;
  apply();
}

/** The controls' parameters become the page's: into the URL (a new history entry) and shown. */
function apply() {
  const p = readControls();
  if (toQuery(p) !== toQuery(params)) history.pushState(null, "", `${location.pathname}?${toQuery(p)}`);
  params = p;
  drawBoard();
  load();
}

// --- loading and drawing --------------------------------------------------------------------

async function fetchTree(p) {
  const res = await fetch(`api/explain?${toQuery(p)}`);
  const body = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
  return body;
}

async function load() {
  const token = ++loadToken;
  stopPlay();
  const err = ctl("ex-error");
  document.body.dataset.state = "loading";
  try {
    const tree = await fetchTree(params);
    if (token !== loadToken) return;
    err.hidden = true;
    err.textContent = "";
    data = tree;
    view.setTree(tree);
    view.home();
    // The search from its start: the tree around the root, ▶ plays it (End shows it done).
    showStep(0);
    summary();
    document.body.dataset.state = "ready";
    counts(token);
  } catch (e) {
    if (token !== loadToken) return;
    err.hidden = false;
    // The server's refusal names the API's own parameters (--max-nodes, depth): its words
    // follow the page's lead sentence.
    err.textContent = t("explain.refused", { why: e && e.message ? e.message : String(e) });
    document.body.dataset.state = "error";
  }
}

function summary() {
  const all = view.recs.length;
  const el = ctl("ex-summary");
  clear(el);
  const best = data.best_move_text !== null
    ? [...tParts("explain.bestMove", { move: h("b", {}, data.best_move_text) }), " · "] : [];
  el.append(...tParts("explain.rootValue", { value: h("b", { id: "ex-root-value" }, valueText(data.value)) }), " · ", ...best,
    h("span", { id: "ex-visited" }, t("explain.visitedOf", { visited: data.visited, count: all })),
    ` ${t("explain.prunedDepth", { pruned: all - data.visited, depth: data.depth })}`);
}

function showStep(k) {
  view.show(k);
  const cur = view.current();
  ctl("ex-step").textContent = t("explain.step", { step: view.step, total: view.total });
  ctl("ex-step").dataset.step = view.step;
  const set = (id, text) => { ctl(id).textContent = text; };
  if (!cur) {
    set("ex-node", t("explain.beforeSearch"));
    set("ex-path", "–");
    set("ex-window", "–");
    set("ex-value", "–");
    ctl("ex-window").dataset.window = "";
    return;
  }
  const n = cur.n;
  set("ex-node", t("explain.nodeLine", { id: n.id, kind: t(`explain.kind.${n.kind}`), visit: n.visit ?? "–" }));
  ctl("ex-node").dataset.nodeId = n.id;
  set("ex-path", view.path(cur).join(" › ") || t("explain.theRoot"));
  const win = data.algorithm === "alphabeta" ? windowText(n) : t("explain.noWindow");
  set("ex-window", win);
  ctl("ex-window").dataset.window = win;
  const parts = [];
  if (n.static !== null) parts.push(t("explain.static", { v: valueText(n.static) }));
  if (n.probability !== null) parts.push(t("explain.probability", { v: valueText(n.probability) }));
  parts.push(t("explain.returns", { v: valueText(n.value) }));
  set("ex-value", parts.join(" · "));
}

// --- the side panel's counts: the same tree under every algorithm and order ------------------

async function counts(token) {
  const body = $("#ex-counts tbody");
  clear(body);
  const cells = {};
  for (const o of ORDERS) {
    const mm = h("td", { "data-algorithm": "minimax", "data-order": o }, "…");
    const ab = h("td", { "data-algorithm": "alphabeta", "data-order": o }, "…");
    cells[`minimax:${o}`] = mm;
    cells[`alphabeta:${o}`] = ab;
    body.append(h("tr", {}, h("th", {}, t(`explain.order.${o}`)), mm, ab));
  }
  const mine = `${data.algorithm}:${data.order}`;
  cells[mine].classList.add("this");
  const leaves = (t) => {
    let n = 0;
    const walk = (x) => { if (x.kind === "leaf" && x.visit !== null) n++; x.children.forEach(walk); };
    walk(t.root);
    return n;
  };
  const fill = (key, tree) => {
    cells[key].textContent = String(tree.visited);
    cells[key].title = t("explain.countTitle", { count: tree.visited, leaves: leaves(tree) });
  };
  fill(mine, data);
  ctl("ex-counts-note").textContent = t("explain.countsNote");
  // Minimax visits every node in any order: one request tells all four.
  const wanted = [["minimax", "left"], ...ORDERS.map((o) => ["alphabeta", o])];
  for (const [algorithm, order] of wanted) {
    if (token !== loadToken) return;
    let tree = null;
    if (`${algorithm}:${order}` === mine) tree = data;
    else {
      try {
        tree = await fetchTree({ ...params, algorithm, order });
      } catch {
        tree = null;
      }
    }
    if (token !== loadToken) return;
    if (!tree) continue;
    if (algorithm === "minimax") for (const o of ORDERS) fill(`minimax:${o}`, tree);
    else fill(`alphabeta:${order}`, tree);
  }
  $("#ex-counts").dataset.complete = "1";
}

// --- stepping ------------------------------------------------------------------------------

function stopPlay() {
  if (timer !== null) clearInterval(timer);
  timer = null;
  ctl("ex-play").textContent = t("explain.play");
}

function togglePlay() {
  if (timer !== null) { stopPlay(); return; }
  if (!data) return;
  if (view.step >= view.total) showStep(0);
  ctl("ex-play").textContent = t("explain.pause");
  timer = setInterval(() => {
    if (view.step >= view.total) { stopPlay(); return; }
    showStep(view.step + 1);
  }, PLAY_MS);
}

function step(delta) {
  stopPlay();
  if (data) showStep(view.step + delta);
}

function wire() {
  const dice = ctl("ex-dice");
  for (const r of ROLLS) dice.append(h("option", { value: r }, r));
  ctl("ex-form").addEventListener("submit", (ev) => { ev.preventDefault(); apply(); });
  ctl("ex-game").addEventListener("change", () => {
    const game = ctl("ex-game").value;
    ctl("ex-position").value = START[game] ?? "";
    ctl("ex-dice").value = "";
    ctl("ex-depth").value = "";
    undo.length = 0;
    if (game === "random" && !ctl("ex-seed").value) ctl("ex-seed").value = String(Math.floor(Math.random() * 10000));
    syncFields();
    apply();
  });
  for (const id of ["ex-dice", "ex-algorithm", "ex-order", "ex-depth", "ex-branching", "ex-seed"]) {
    ctl(id).addEventListener("change", apply);
  }
  ctl("ex-position").addEventListener("change", () => { undo.push(params.position ?? START[params.game] ?? ""); apply(); });
  ctl("ex-reseed").addEventListener("click", () => {
    ctl("ex-seed").value = String(Math.floor(Math.random() * 10000));
    apply();
  });
  ctl("ex-undo").addEventListener("click", () => {
    if (!undo.length) return;
    ctl("ex-position").value = undo.pop();
    apply();
  });
  ctl("ex-reset").addEventListener("click", () => setPosition(START[ctl("ex-game").value] ?? ""));
  ctl("ex-first").addEventListener("click", () => { stopPlay(); if (data) showStep(0); });
  ctl("ex-last").addEventListener("click", () => { stopPlay(); if (data) showStep(view.total); });
  ctl("ex-prev").addEventListener("click", () => step(-1));
  ctl("ex-next").addEventListener("click", () => step(1));
  ctl("ex-play").addEventListener("click", togglePlay);
  ctl("ex-zoom-in").addEventListener("click", () => view.zoom(1 / 1.4));
  ctl("ex-zoom-out").addEventListener("click", () => view.zoom(1.4));
  ctl("ex-fit").addEventListener("click", () => view.fit());
  ctl("ex-save").addEventListener("click", save);
  document.addEventListener("keydown", (ev) => {
    const t = ev.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const keys = {
      ArrowRight: () => step(1), ArrowLeft: () => step(-1),
      Home: () => { stopPlay(); showStep(0); }, End: () => { stopPlay(); showStep(view.total); },
      " ": togglePlay,
    };
    if (keys[ev.key] && data) { ev.preventDefault(); keys[ev.key](); }
  });
  window.addEventListener("popstate", () => {
    params = fromUrl();
    fillControls(params);
    load();
  });
}

function save() {
  if (!data) return;
  const blob = new Blob([view.svgText()], { type: "image/svg+xml" });
  const url = URL.createObjectURL(blob);
  const name = data.game === "random" ? `explain-random-${params.seed ?? 0}` : `explain-${data.game}`;
  const a = h("a", { href: url, download: `${name}-${data.algorithm}-${data.order}.svg` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

wire();
params = fromUrl();
fillControls(params);
history.replaceState(null, "", `${location.pathname}?${toQuery(params)}`);
load();

/** The legend's line on proofs, its two marks in bold, in the page's language. */
function legendProofs() {
  const el = document.getElementById("ex-legend-proofs");
  if (!el) return;
  clear(el);
  el.append(...tParts("explain.legendProofs", { w: h("b", {}, "W3"), l: h("b", {}, "L3") }));
}

legendProofs();
onLanguageChange(() => {
  legendProofs();
  ctl("ex-play").textContent = timer === null ? t("explain.play") : t("explain.pause");
  if (!data) return;
  summary();
  showStep(view.step);
  counts(loadToken);
});
