// The review of a finished game (/review/{room_id}): the board at every step, drawn by the
// room's own board modules, each move with the engine's verdict, the best move where the
// played one lost something, and the score over the game. Read only: no WebSocket.
//
// Step k (0 = the start … n = the final position) is the position move k was played in: the
// board is that move's state_before (the room's final state at n), and move k is the one the
// list, the caption and the chart's marker point at.
import { h, s, clear } from "./dom.js";
import { gameTitle, moveText, pieceName, playDice, seatName as shownName } from "./notation.js";
import { boardModule, resultText } from "./room.js";
import { t, tParts, tWord, fmtNumber, onLanguageChange } from "./i18n.js";

const VERDICTS = ["best", "good", "inaccuracy", "mistake", "blunder"];
// The chart's scale: scores beyond this many clear edges (the game's score_typical) are drawn
// at its edge; a proven result sits there too (the engine puts it at ± its cap).
const CHART_EDGES = 3;
const CHART_W = 600, CHART_H = 150, CHART_PAD = 12;

// The page's address ends with the room id; the API is in the folder above.
const roomId = decodeURIComponent(location.pathname.replace(/\/+$/, "").split("/").pop() || "");
const apiUrl = (path) => new URL(`../api/${path}`, location.href).href;
const roomApi = (rest = "") => apiUrl(`rooms/${encodeURIComponent(roomId)}${rest}`);

const view = {
  record: null,   // GET /api/rooms/{id}: the room as a spectator sees it, finished
  moves: null,    // the review's entries, one per action
  game: null,     // this game's entry of GET /api/games (score unit and scale, formats)
  step: 0,
  showBest: false,  // backgammon: the board marks the best play instead of the one played
  ui: {},           // the board module's own state across redraws
  players: null,    // the review's summary of each side, drawn again on a switch of language
};

const $ = (id) => document.getElementById(id);

function say(text, kind = "") {
  const el = $("rv-status");
  el.hidden = !text;
  el.className = `panel notice rv-status${kind ? ` ${kind}` : ""}`;
  clear(el);
  if (text) el.append(text);
  return el;
}

async function getJson(url) {
  const r = await fetch(url, { headers: { Accept: "application/json" } });
  let body = null;
  try { body = await r.json(); } catch { /* an empty or non-JSON body: the status says enough */ }
  return { status: r.status, body, retryAfter: Number(r.headers.get("Retry-After")) || 0 };
}

const sleep = (secs) => new Promise((res) => setTimeout(res, secs * 1000));

// --- loading ---------------------------------------------------------------------------------

async function main() {
  document.addEventListener("keydown", onKey);
  for (const [id, to] of [["rv-first", () => 0], ["rv-prev", () => view.step - 1],
    ["rv-next", () => view.step + 1], ["rv-last", () => Infinity]]) {
    $(id).addEventListener("click", () => go(to()));
  }
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(roomId)) {
    $("rv-game").textContent = t("review.noGame");
    say(t("review.noRoomAddress"), "bad");
    return;
  }
  const [games, room] = await Promise.all([getJson(apiUrl("games")), getJson(roomApi())]);
  if (room.status === 404) {
    $("rv-game").textContent = t("review.noGame");
    say(t("room.noSuchRoom"), "bad");
    return;
  }
  if (room.status !== 200 || !room.body) {
    $("rv-game").textContent = t("common.review");
    say(t("review.unreadable", { status: room.status }), "bad");
    return;
  }
  view.record = room.body;
  view.game = ((games.body && games.body.games) || []).find((g) => g.game === view.record.game) ||
    { game: view.record.game, score_unit: "points", score_typical: 1, formats: ["json"] };
  renderHead();
  if (view.record.status !== "finished") {
    notOver(view.record.status);
    return;
  }
  await loadReview();
}

function notOver(status) {
  const el = say("");
  el.hidden = false;
  // A closed room's game never started: it will never have a review.
  el.append(h("p", { id: "rv-not-over" }, status === "closed"
    ? t("review.closed") : t("review.notOver", { status: tWord("status", status) })),
  h("a", { class: "btn primary", href: `../#/watch/${encodeURIComponent(roomId)}` }, t("review.openRoom")));
}

/** Asks for the review until it is ready: the first request starts it and a long game takes
 * the engine a minute or more, meanwhile the answer is 202 (ask again in retry_after s). */
async function loadReview() {
  say(t("review.reviewing"));
  for (;;) {
    let res;
    try {
      res = await getJson(roomApi("/review"));
    } catch {
      say(t("review.unreachable"), "bad");
      await sleep(5);
      continue;
    }
    if (res.status === 200 && res.body) {
      view.moves = res.body.moves || [];
      say("");
      view.players = res.body.players || [];
      renderSummary(view.players);
      $("rv-body").hidden = false;
      renderMoves();
      go(0);
      return;
    }
    if (res.status === 202) {
      say(t("review.reviewing"));
      await sleep((res.body && res.body.retry_after) || res.retryAfter || 2);
    } else if (res.status === 409) {
      notOver("playing");
      return;
    } else if (res.status === 404) {
      say(t("room.noSuchRoom"), "bad");
      return;
    } else if (res.status === 503) {
      const wait = res.retryAfter || 60;
      say(t("review.busy", { count: wait }));
      await sleep(wait);
    } else {
      const el = say(`${t("review.failed", { status: res.status })} `, "bad");
      el.append(h("button", { class: "btn small", type: "button", on: { click: () => loadReview() } }, t("review.tryAgain")));
      return;
    }
  }
}

// --- the header ------------------------------------------------------------------------------

function seatName(rec, seat) {
  const s0 = rec.seats[seat];
  return shownName(s0) || pieceName(rec.game, seat);
}

/** A side named with its pieces, so that two seats of one name (two bots of one level, a
 * person playing themselves) are told apart. */
function sideName(rec, seat) {
  return t("review.side", { name: seatName(rec, seat), side: pieceName(rec.game, seat) });
}

/** The result in words, each player named with their pieces: two bots of one level, or two
 * people of one name, are told apart. */
function resultWords(rec) {
  const seats = rec.seats.map((x, i) => ({ ...x, name: sideName(rec, i) }));
  return resultText({ ...rec, seats, your_seats: [] });
}

function renderHead() {
  const rec = view.record;
  const title = rec.game === "grundy" && rec.options && rec.options.heap
    ? t("room.grundyHeap", { game: gameTitle(rec.game), n: rec.options.heap }) : gameTitle(rec.game);
  $("rv-game").textContent = t("review.heading", { title });
  document.title = t("review.docTitle", { title });
  const players = $("rv-players");
  clear(players);
  rec.seats.forEach((seat, i) => {
    if (i) players.append(h("span", { class: "vs" }, ` ${t("common.vs")} `));
    players.append(h("span", { class: "rv-player", "data-seat": i },
      h("span", { class: `swatch tiny g-${rec.game} s${i}`, "aria-hidden": "true" }), " ",
      h("span", { class: `pname${seat.kind === "bot" ? " bot" : ""}` }, seatName(rec, i)),
      // A bot account's seat is a person's kind: the server says it is a program.
      seat.bot ? h("span", { class: "tag bot", title: t("review.botTitle") }, ` ${t("common.bot")}`) : "",
      h("span", { class: "muted small" }, ` (${pieceName(rec.game, i)})`)));
  });
  $("rv-result").textContent = rec.status === "finished" ? resultWords(rec) : "";
  const links = $("rv-links");
  clear(links);
  const id = encodeURIComponent(roomId);
  links.append(h("a", { class: "btn small", id: "rv-room-link", href: `../#/watch/${id}` }, t("review.openRoom")));
  const extensions = { json: "json", moves: "txt", mat: "mat" };
  for (const f of view.game.formats || ["json"]) {
    // A file to keep (the server says so too: Content-Disposition attachment), not a page.
    links.append(h("a", { class: "btn small ghost rv-export", "data-format": f,
      download: `tablas-${roomId}.${extensions[f] || f}`,
      title: t("review.downloadTitle", { format: f }), href: roomApi(`/export?format=${encodeURIComponent(f)}`) },
    t("review.download", { format: tWord("review.format", f) })));
  }
}

// --- the summary -----------------------------------------------------------------------------


/** Each side's play summed up (the review's players): its decisions, inaccuracies, mistakes
 * and blunders, and its average loss per decision (backgammon: the error rate, as gnubg and
 * Backgammon Galaxy show it, also in thousandths of a point). */
function renderSummary(players) {
  const el = $("rv-summary");
  clear(el);
  el.hidden = !players.length;
  if (!players.length) return;
  const rec = view.record;
  const equity = view.game.score_unit === "equity";
  el.append(h("h2", { class: "rv-summary-title" }, t("review.summary")));
  const row = h("div", { class: "rv-summary-row" });
  for (const p of players) {
    const avg = Number(p.average_loss) || 0;
    const rate = equity
      ? h("span", { class: "rv-rate", title: t("review.errorRateTitle") },
        t("review.errorRate", { rate: fmtNumber(avg, { minimumFractionDigits: 3, maximumFractionDigits: 3 }),
          mpts: fmtNumber(avg * 1000, { minimumFractionDigits: 1, maximumFractionDigits: 1 }) }))
      : h("span", { class: "rv-rate", title: t("review.avgLossTitle") },
        t("review.avgLoss", { loss: fmtNumber(avg, { minimumFractionDigits: 1, maximumFractionDigits: 1 }) }));
    row.append(h("div", { class: "rv-summary-side", "data-seat": p.seat },
      h("div", { class: "rv-summary-name" },
        h("span", { class: `swatch tiny g-${rec.game} s${p.seat}`, "aria-hidden": "true" }), " ",
        seatName(rec, p.seat), h("span", { class: "muted small" }, ` (${pieceName(rec.game, p.seat)})`)),
      h("div", { class: "rv-summary-stats small" },
        h("span", {}, t("review.decisions", { count: p.moves })),
        h("span", { class: "v-inaccuracy" }, t("review.inaccuracies", { count: p.inaccuracies })),
        h("span", { class: "v-mistake" }, t("review.mistakes", { count: p.mistakes })),
        h("span", { class: "v-blunder" }, t("review.blunders", { count: p.blunders })),
        rate)));
  }
  el.append(row);
}

// --- stepping --------------------------------------------------------------------------------

function go(k) {
  if (!view.moves) return;
  const n = view.moves.length;
  const step = Math.max(0, Math.min(n, Number.isFinite(k) ? k : n));
  if (step !== view.step) view.showBest = false;
  view.step = step;
  view.ui = {};
  drawBoard();
  renderCaption();
  markMoves();
  markChart();
  // A board module may say where a position stands beyond the board (a match's score).
  const mod = boardModule(view.record.game);
  const at = roomAt(step);
  const note = mod && mod.stateNote && at.state ? mod.stateNote(at.state) : null;
  const where = step === n ? t("review.stepEnd", { count: n }) : t("review.stepOf", { n: step + 1, total: n });
  $("rv-step").textContent = note ? `${where} · ${note}` : where;
  $("rv-first").disabled = $("rv-prev").disabled = step === 0;
  $("rv-next").disabled = $("rv-last").disabled = step === n;
}

function onKey(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey || !view.moves) return;
  const t = ev.target;
  if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) return;
  const to = { ArrowLeft: view.step - 1, ArrowRight: view.step + 1, Home: 0, End: Infinity }[ev.key];
  if (to === undefined) return;
  ev.preventDefault();
  go(to);
}

/** A move as the room's own move list writes it (the engine's text when the entry has no
 * MOVE object), so that the review and the room name moves alike. */
function textOf(move, engineText) {
  // Backgammon's "roll" is the cube decision not to double (as gnubg names it).
  if (move && move.action === "roll" && view.record.game === "backgammon") return t("review.noDouble");
  return move ? moveText(view.record.game, move) : engineText || "";
}

/** A backgammon "roll" entry: the decision not to double, worth a line only when it was wrong. */
const quietRoll = (e) => e.move && e.move.action === "roll" && (e.verdict === "best" || e.verdict === "good");

/** The move the engine preferred at this entry, when the one played gave something away. */
function betterMove(entry) {
  return entry && entry.best_move && entry.verdict !== "best" &&
    entry.best_move_text !== entry.move_text ? entry.best_move : null;
}

function historyAt(k) {
  const hist = view.record.history || [];
  return view.moves.slice(0, k).map((m, i) => m.move || hist[i]);
}

/** The room as the board modules read it, at step k: nobody's to play but the mover of move
 * k; the only "legal" move is the better one, which the modules draw as the ghost of a move. */
function roomAt(k) {
  const rec = view.record, n = view.moves.length;
  const entry = k < n ? view.moves[k] : null;
  const history = historyAt(k);
  const better = betterMove(entry);
  const bg = rec.game === "backgammon";
  // Backgammon marks the latest play's points: made the play of step k (or the better one),
  // it marks where that play's checkers go from and to.
  const shown = bg && entry && entry.move && entry.move.play
    ? (view.showBest && better && better.play ? better : entry.move) : null;
  return {
    ...rec,
    ply: k,
    state: entry ? entry.state_before : rec.state,
    history: shown ? [...history, shown] : history,
    rolls: (rec.rolls || []).filter((r) => r.ply <= k),
    to_move: entry ? entry.seat : null,
    status: entry ? "playing" : "finished",
    result: entry ? null : rec.result,
    legal_moves: better && !bg ? [better] : [],
    your_seats: [],
    clocks: null,
    clock_running: null,
  };
}

function drawBoard() {
  const holder = $("rv-board");
  clear(holder);
  const rec = view.record;
  const mod = boardModule(rec.game);
  const room = roomAt(view.step);
  holder.dataset.step = view.step;
  if (!mod || !room.state) {
    holder.append(h("p", {}, t("review.position", { position: (room.state && room.state.notation) || "?" })));
    return;
  }
  const better = room.legal_moves.length > 0;
  if (rec.game === "grundy" && better) view.ui.selected = room.legal_moves[0].heap;
  const ctx = {
    room,
    game: rec.game,
    viewSeat: 0,
    canMove: better,
    ui: view.ui,
    prev: null,
    fresh: false,
    send: () => {},  // the page only shows: the board is inert
    rerender: drawBoard,
  };
  const out = mod.render(ctx);
  out.svg.classList.add("review-board");
  // The better move is what the module draws as a move one could make: marked as the best.
  for (const ghost of out.svg.querySelectorAll(".ghost")) {
    ghost.classList.add("best-ghost");
    const place = ghost.closest("[data-cell], [data-col], [data-heap]");
    if (place) place.classList.add("best-move");
  }
  if (rec.game === "grundy" && better) {
    const heap = out.svg.querySelector(`[data-heap="${room.legal_moves[0].heap}"]`);
    if (heap) heap.classList.add("best-move");
  }
  const vb = out.svg.viewBox && out.svg.viewBox.baseVal;
  if (vb && vb.height) out.svg.style.setProperty("--ar", (vb.width / vb.height).toFixed(4));
  holder.append(out.svg);
}

// --- the caption -----------------------------------------------------------------------------

function lossText(loss) {
  const unit = view.game.score_unit;
  const x = Number(loss) || 0;
  return unit === "equity"
    ? t("review.lossEquity", { x: fmtNumber(x, { minimumFractionDigits: 3, maximumFractionDigits: 3 }) })
    : t("review.lossPoints", { count: Math.round(x) });
}

/** A loss as a bare number, for the move list. */
function lossNumber(loss) {
  const x = Number(loss) || 0;
  return view.game.score_unit === "equity"
    ? fmtNumber(x, { minimumFractionDigits: 3, maximumFractionDigits: 3 }) : fmtNumber(Math.round(x));
}

function renderCaption() {
  const el = $("rv-caption");
  clear(el);
  const rec = view.record, n = view.moves.length, k = view.step;
  if (k === n) {
    el.append(h("p", { class: "rv-cap-head" }, t("review.final")),
      h("p", {}, resultWords(rec)));
    return;
  }
  const e = view.moves[k];
  const bg = rec.game === "backgammon";
  const dice = bg && e.move && e.move.play ? playDice(rec.rolls, k) : null;
  el.append(h("p", { class: "rv-cap-head" },
    h("span", { class: `swatch tiny g-${rec.game} s${e.seat}`, "aria-hidden": "true" }), " ",
    t("review.toPlay", { name: seatName(rec, e.seat) }), dice ? ` ${dice.join("-")}` : ""));
  const played = h("p", { id: "rv-played" }, ...tParts("review.played", { move: h("strong", {}, textOf(e.move, e.move_text)) }), " ",
    verdictTag(e));
  if (Number(e.loss) > 0) played.append(" ", h("span", { class: "muted" }, t("review.loses", { loss: lossText(e.loss) })));
  el.append(played);
  if (e.proven_before && e.proven_after && e.proven_before !== e.proven_after) {
    el.append(h("p", { class: "rv-proven" },
      t("review.turned", { before: tWord("review.proven", e.proven_before), after: tWord("review.proven", e.proven_after) })));
  }
  const better = betterMove(e);
  if (better) {
    const best = h("p", { id: "rv-best" }, ...tParts("review.bestWas", { move: h("strong", {}, textOf(better, e.best_move_text)) }));
    if (bg && better.play && e.move && e.move.play) {
      // One play is marked on the board at a time: the one played, or the engine's.
      best.append(" ", h("button", { class: "btn small", type: "button", id: "rv-toggle-best",
        on: { click: () => { view.showBest = !view.showBest; drawBoard(); renderCaption(); } } },
      view.showBest ? t("review.showPlayed") : t("review.showBest")));
    } else if (!bg && !better.boom) {  // a BOOM is no piece: the words say it
      best.append(h("span", { class: "muted" }, ` ${t("review.drawnOnBoard")}`));
    }
    el.append(best);
  } else if (!e.best_move_text) {
    el.append(h("p", { class: "muted" }, t("review.forced")));
  }
}

function verdictTag(e) {
  const v = VERDICTS.includes(e.verdict) ? e.verdict : "good";
  return h("span", { class: `verdict-tag v-${v}`, "data-verdict": v,
    title: Number(e.loss) > 0 ? t("review.loses", { loss: lossText(e.loss) }) : t("review.noLoss") }, t(`review.verdict.${v}`));
}

// --- the move list ---------------------------------------------------------------------------

function renderMoves() {
  const ol = $("rv-moves");
  clear(ol);
  const rec = view.record;
  const bg = rec.game === "backgammon";
  view.moves.forEach((e, i) => {
    const dice = bg && e.move && e.move.play ? playDice(rec.rolls, i) : null;
    const quiet = quietRoll(e);
    const li = h("li", { class: `rv-move s${e.seat} v-${e.verdict}${quiet ? " quiet" : ""}`, "data-ply": i, tabindex: "-1" },
      h("span", { class: "num" }, quiet ? "" : `${i + 1}.`),
      h("span", { class: `swatch tiny g-${rec.game} s${e.seat}`, "aria-hidden": "true" }),
      dice ? h("span", { class: "mv-dice" }, `${dice.join("-")}: `) : null,
      h("button", { class: "rv-move-btn", type: "button", title: t("review.goTo", { n: i + 1 }),
        on: { click: () => go(i) } }, textOf(e.move, e.move_text)),
      quiet ? null : verdictTag(e),
      Number(e.loss) > 0 ? h("span", { class: "rv-loss" }, `−${lossNumber(e.loss)}`) : null);
    ol.append(li);
  });
  if (!view.moves.length) ol.append(h("li", { class: "muted" }, t("review.noMoves")));
  renderChart();
}

function markMoves() {
  const ol = $("rv-moves");
  for (const li of ol.children) {
    const on = Number(li.dataset.ply) === view.step;
    li.classList.toggle("current", on);
    if (on) li.setAttribute("aria-current", "step"); else li.removeAttribute("aria-current");
  }
  const cur = ol.querySelector(".current");
  if (cur) {
    // Scrolls the list, never the page: the board stays where the player is looking.
    const top = cur.offsetTop - ol.offsetTop, bottom = top + cur.offsetHeight;
    if (top < ol.scrollTop) ol.scrollTop = top;
    else if (bottom > ol.scrollTop + ol.clientHeight) ol.scrollTop = bottom - ol.clientHeight;
  }
}

// --- the chart -------------------------------------------------------------------------------

function chartX(i) {
  const n = Math.max(1, view.moves.length);
  return CHART_PAD + (i * (CHART_W - 2 * CHART_PAD)) / n;
}

function chartY(v) {
  const range = CHART_EDGES * (Number(view.game.score_typical) || 1);
  const c = Math.max(-1, Math.min(1, (Number(v) || 0) / range));
  return CHART_H / 2 - c * (CHART_H / 2 - CHART_PAD);
}

/** score_after of every move, from seat 0's side: up is good for seat 0. One point per move,
 * at the move's step, coloured by its verdict; a click anywhere goes to the nearest step. */
function renderChart() {
  const box = $("rv-chart-box");
  clear(box);
  const rec = view.record, n = view.moves.length;
  const svg = s("svg", { id: "rv-chart", class: "rv-chart", viewBox: `0 0 ${CHART_W} ${CHART_H}`,
    role: "img", "aria-label": t("review.chartLabel", { name: seatName(rec, 0) }) });
  svg.append(s("rect", { x: 0, y: 0, width: CHART_W, height: CHART_H, rx: 8, class: "rv-chart-bg" }));
  svg.append(s("rect", { x: 0, y: 0, width: CHART_W, height: CHART_H / 2, rx: 8, class: "rv-chart-s0" }));
  svg.append(s("line", { x1: CHART_PAD, x2: CHART_W - CHART_PAD, y1: CHART_H / 2, y2: CHART_H / 2, class: "rv-chart-zero" }));
  svg.append(s("text", { x: CHART_W - CHART_PAD, y: CHART_PAD + 4, class: "rv-chart-label", "text-anchor": "end" },
    t("review.better", { side: sideName(rec, 0) })));
  svg.append(s("text", { x: CHART_W - CHART_PAD, y: CHART_H - CHART_PAD, class: "rv-chart-label", "text-anchor": "end" },
    t("review.better", { side: sideName(rec, 1) })));
  const known = view.moves.map((e, i) => [i, e.score_after]).filter(([, v]) => v !== null && v !== undefined);
  if (known.length > 1) {
    svg.append(s("polyline", { class: "rv-chart-line",
      points: known.map(([i, v]) => `${chartX(i).toFixed(1)},${chartY(v).toFixed(1)}`).join(" ") }));
  }
  svg.append(s("line", { id: "rv-chart-marker", class: "rv-chart-marker", x1: chartX(0), x2: chartX(0),
    y1: 4, y2: CHART_H - 4 }));
  view.moves.forEach((e, i) => {
    const unknown = e.score_after === null || e.score_after === undefined;
    const pt = s("circle", { class: `rv-pt v-${e.verdict}${unknown ? " unknown" : ""}`, "data-ply": i,
      cx: chartX(i).toFixed(1), cy: chartY(unknown ? 0 : e.score_after).toFixed(1),
      r: e.verdict === "blunder" || e.verdict === "mistake" ? 4.5 : 3 });
    pt.append(s("title", {}, `${i + 1}. ${textOf(e.move, e.move_text)}: ${tWord("review.verdict", e.verdict)}`));
    svg.append(pt);
  });
  svg.addEventListener("click", (ev) => {
    const r = svg.getBoundingClientRect();
    if (!r.width) return;
    const x = ((ev.clientX - r.left) / r.width) * CHART_W;
    go(Math.round(((x - CHART_PAD) / (CHART_W - 2 * CHART_PAD)) * Math.max(1, n)));
  });
  box.append(svg, h("p", { class: "small muted" },
    view.game.score_unit === "equity" ? t("review.chartEquity") : t("review.chartPoints"), " ",
    t("review.chartClip", { edge: fmtNumber(CHART_EDGES * (Number(view.game.score_typical) || 1)) })));
}

function markChart() {
  const m = document.getElementById("rv-chart-marker");
  if (!m) return;
  const x = chartX(view.step).toFixed(1);
  m.setAttribute("x1", x);
  m.setAttribute("x2", x);
  for (const pt of document.querySelectorAll("#rv-chart .rv-pt")) {
    pt.classList.toggle("current", Number(pt.dataset.ply) === view.step);
  }
}

// A switch of language draws the review again from what it has (nothing is asked again).
onLanguageChange(() => {
  if (!view.record) return;
  renderHead();
  if (view.moves) { renderMoves(); go(view.step); }
  if (view.players) renderSummary(view.players);
});

main().catch((e) => say(t("review.broken", { why: e && e.message ? e.message : String(e) }), "bad"));
