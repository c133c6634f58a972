// The lobby: the live list of rooms and the "new game" form.
import { h, s, clear } from "./dom.js";
import { GAMES, gameTitle, seatName } from "./notation.js";
import { serverGames } from "./net.js";
import { resultText, reviewHref, seedField } from "./room.js";
import { renderMeet, clockPicker, botTag } from "./meet.js";
import { t, tParts, tWord, errorText } from "./i18n.js";


/** Small SVG pictures of the games (no emoji: not every system has an emoji font). */
export function gameIcon(id) {
  const svg = s("svg", { viewBox: "0 0 32 32", class: `game-icon gi-${id}`, "aria-hidden": "true" });
  if (id === "tictactoe") {
    svg.append(s("path", { d: "M5 5 L14 14 M14 5 L5 14", class: "gi-x" }),
      s("circle", { cx: 22.5, cy: 22.5, r: 5, class: "gi-o" }),
      s("path", { d: "M16 3 V29 M3 16 H29", class: "gi-grid" }));
  } else if (id === "grundy") {
    for (let i = 0; i < 4; i++) svg.append(s("ellipse", { cx: 10, cy: 26 - i * 5, rx: 7, ry: 3, class: "gi-coin" }));
    for (let i = 0; i < 2; i++) svg.append(s("ellipse", { cx: 23, cy: 26 - i * 5, rx: 7, ry: 3, class: "gi-coin" }));
  } else if (id === "connect4") {
    svg.append(s("rect", { x: 2, y: 6, width: 28, height: 22, rx: 4, class: "gi-frame" }),
      s("circle", { cx: 10, cy: 21, r: 4.5, class: "gi-red" }), s("circle", { cx: 22, cy: 21, r: 4.5, class: "gi-yellow" }),
      s("circle", { cx: 10, cy: 12, r: 4.5, class: "gi-yellow" }), s("circle", { cx: 22, cy: 12, r: 4.5, class: "gi-hole" }));
  } else if (id === "boom") {
    svg.append(s("circle", { cx: 14, cy: 19, r: 10, class: "gi-bomb" }),
      s("path", { d: "M19 10 q4 -7 9 -4", class: "gi-fuse" }), s("circle", { cx: 28, cy: 6, r: 3, class: "gi-spark" }));
  } else {
    svg.append(s("rect", { x: 3, y: 3, width: 26, height: 26, rx: 6, class: "gi-die" }));
    for (const [x, y] of [[10, 10], [22, 10], [16, 16], [10, 22], [22, 22]]) svg.append(s("circle", { cx: x, cy: y, r: 2.6, class: "gi-pip" }));
  }
  return svg;
}

export function renderLobby(app, root) {
  clear(root);
  const saved = JSON.parse(localStorage.getItem("tablas-create") || "{}");
  const form = h("form", { class: "panel create", id: "create-form", "aria-label": t("lobby.newGameLabel") });
  form.append(h("h2", {}, t("lobby.newGame")));
  const games = h("div", { class: "game-pick", role: "radiogroup", "aria-label": t("lobby.gameLabel") });
  for (const id of Object.keys(GAMES)) {
    const input = h("input", { type: "radio", name: "game", value: id, id: `g-${id}`,
      checked: (saved.game || "connect4") === id });
    games.append(h("label", { class: "game-card", for: `g-${id}` }, input,
      gameIcon(id),
      h("span", { class: "game-name" }, gameTitle(id))));
  }
  form.append(games);
  const heap = h("input", { type: "number", id: "opt-heap", min: 3, max: 60, value: saved.heap || 7 });
  const cube = h("input", { type: "checkbox", id: "opt-cube", checked: saved.cube !== false });
  // Backgammon: a money game, or a match to 1-25 points (contract section 8).
  const matchTo = h("select", { id: "opt-match" }, h("option", { value: "" }, t("lobby.moneyGame")),
    Array.from({ length: 25 }, (_, i) => h("option", { value: String(i + 1) }, t("lobby.matchTo", { count: i + 1 }))));
  matchTo.value = saved.matchTo || "";
  const seed = seedField("opt-seed");
  seed.label.classList.add("opt", "opt-backgammon");
  const opts = h("div", { class: "row options" },
    h("label", { class: "opt opt-grundy" }, t("lobby.heapSize"), " ", heap),
    h("label", { class: "opt opt-backgammon" }, cube, " ", t("lobby.doublingCube")),
    h("label", { class: "opt opt-backgammon" }, t("lobby.play"), " ", matchTo), seed.label);
  form.append(opts);
  const opp = h("select", { id: "opponent" },
    h("option", { value: "human" }, t("lobby.opponentHuman")));
  // The bot levels are the server's (GET /api/games): the page keeps no copy of them.
  serverGames().then((info) => {
    opp.append(...info.levels.map((l) => h("option", { value: l }, t("lobby.opponentBot", { level: tWord("level", l) }))));
    opp.value = saved.opponent || "easy";
  });
  const seat = h("select", { id: "seat" },
    h("option", { value: "0" }, t("lobby.seatFirst")),
    h("option", { value: "1" }, t("lobby.seatSecond")),
    h("option", { value: "random" }, t("lobby.seatRandom")));
  seat.value = saved.seat || "0";
  form.append(h("div", { class: "row" },
    h("label", {}, t("lobby.opponent"), " ", opp), h("label", {}, t("lobby.seat"), " ", seat)));
  // Room options (additive protocol fields): sent only when chosen.
  // The presets, or a custom clock typed as minutes+seconds (7+3).
  const clock = clockPicker("clock", saved.clock || "");
  const showAnalysis = h("input", { type: "checkbox", id: "show-analysis", checked: !!saved.showAnalysis });
  // Rated games are for registered players (the server says so if not).
  const rated = h("input", { type: "checkbox", id: "rated", checked: !!saved.rated });
  const extras = h("div", { class: "row" });
  extras.append(h("label", {}, t("lobby.clock"), " ", clock.el),
    h("label", {}, showAnalysis, " ", t("lobby.showAnalysis")),
    h("label", { title: t("lobby.ratedTitle") }, rated, " ", t("lobby.rated")));
  form.append(extras);
  form.append(h("button", { class: "btn primary big", type: "submit", id: "create-btn" }, t("lobby.create")));
  const sync = () => {
    const g = form.querySelector("input[name=game]:checked").value;
    for (const el of opts.querySelectorAll(".opt")) el.hidden = !el.classList.contains(`opt-${g}`);
    seatLabels(seat, g);
  };
  form.addEventListener("change", sync);
  sync();
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const game = form.querySelector("input[name=game]:checked").value;
    let chosen;
    try { chosen = clock.value(); } catch (e) { app.toast(e.message, "error"); return; }
    const options = {};
    if (game === "grundy") options.heap = Math.max(3, Math.min(60, Number(heap.value) || 7));
    if (game === "backgammon") options.cube = cube.checked;
    if (game === "backgammon" && matchTo.value) options.match_to = Number(matchTo.value);
    localStorage.setItem("tablas-create", JSON.stringify({ game, heap: heap.value, cube: cube.checked,
      matchTo: matchTo.value,
      opponent: opp.value, seat: seat.value, clock: chosen, showAnalysis: showAnalysis.checked,
      rated: rated.checked }));
    let mine = seat.value === "random" ? Math.floor(Math.random() * 2) : Number(seat.value);
    const other = opp.value === "human" ? { kind: "human" } : { kind: "bot", level: opp.value };
    const seats = mine === 0 ? [{ kind: "human" }, other] : [other, { kind: "human" }];
    const msg = { game, options, seats, join_seat: mine };
    if (chosen) {
      const [base, inc] = chosen.split(":").map(Number);
      msg.clock = { base_ms: base, increment_ms: inc };
    }
    if (showAnalysis.checked) msg.show_analysis = true;
    if (rated.checked) {
      msg.rated = true;
      // A rated game has a clock: without a choice, five minutes a side.
      if (!msg.clock) msg.clock = { base_ms: 300000, increment_ms: 0 };
    }
    if (game === "backgammon" && seed.input.value) msg.seed = seed.input.value;
    app.createRoom(msg);
  });

  const list = h("div", { class: "panel rooms" },
    h("div", { class: "panel-head" }, h("h2", {}, t("lobby.rooms")),
      h("span", { class: "muted", id: "rooms-count" }, "")),
    h("div", { id: "rooms-list", class: "rooms-list" }, h("p", { class: "muted" }, t("common.loading"))));
  const recent = h("div", { class: "panel recent", id: "recent-panel", hidden: true },
    h("div", { class: "panel-head" }, h("h2", {}, t("lobby.recentGames"))),
    h("div", { id: "recent-list", class: "rooms-list" }));
  const account = h("div", { class: "panel account", id: "account" });
  root.append(h("section", { class: "lobby" },
    account,
    h("div", { class: "hero" },
      h("h1", {}, t("lobby.heroTitle")),
      h("p", { class: "muted" }, t("lobby.heroText")),
      h("a", { href: "explain", id: "explain-link", class: "small" }, t("lobby.explainLink"))),
    h("div", { class: "lobby-grid" }, form, h("div", { class: "lobby-lists" },
      h("div", { class: "panel meet", id: "meet", "aria-label": t("lobby.meetLabel") }), list,
      h("div", { class: "panel tourneys", id: "tourneys", "aria-label": t("lobby.tourneysLabel") }), recent))));
  renderMeet(app);
  app.tourneys.render();
  app.pollSeeks();
  renderRooms(app, app.rooms, true);
  renderRecent(app, app.recent, true);
  renderAccount(app);
}

/** Who this page plays as: a registered player (with links to their page and the
 * leaderboard), or a guest with a form to register the name typed in it or log in. What is
 * typed and why the server refused it outlive the panel's redraws (a refused login brings a
 * new welcome, which redraws it): `app.accountDraft` and `app.accountError`. */
export function renderAccount(app) {
  const box = document.getElementById("account");
  if (!box) return;
  clear(box);
  const links = h("span", { class: "row small" },
    h("a", { href: "leaderboard", id: "leaderboard-link" }, t("common.leaderboard")));
  if (app.me && app.me.registered) {
    box.append(h("p", { id: "account-status" }, ...tParts("account.playingAs", {
      name: h("strong", {}, app.me.name),
      page: h("a", { href: `players/${encodeURIComponent(app.me.player_id)}`, id: "my-page" }, t("account.yourPage")) }),
    " · "), links);
    return;
  }
  const typed = app.accountDraft ?? ((app.me && app.me.name) || "");
  const name = h("input", { id: "login-name", autocomplete: "username", maxlength: 24,
    value: typed, "aria-label": t("account.name") });
  const password = h("input", { id: "login-password", type: "password", autocomplete: "current-password",
    minlength: 8, maxlength: 128, "aria-label": t("account.password"), placeholder: t("account.passwordPlaceholder") });
  const register = h("button", { class: "btn small", type: "button", id: "register-btn",
    title: t("account.registerTitle") }, t("account.register"));
  const login = h("button", { class: "btn primary small", type: "submit", id: "login-btn" }, t("account.login"));
  // The lobby's one name box: play under it as a guest, register it, or log in with it.
  const rename = h("button", { class: "btn small", type: "button", id: "rename-btn",
    title: t("account.renameTitle") }, t("account.rename"));
  rename.addEventListener("click", () => { app.accountDraft = null; app.rename(name.value); });
  const form = h("form", { class: "row account-form", id: "account-form", "aria-label": t("account.label") },
    name, password, login, register, rename, links);
  const error = h("p", { id: "account-error", class: "account-error", role: "alert" },
    app.accountError ? errorText(app.accountError) : "");
  error.hidden = !app.accountError;
  name.addEventListener("input", () => { app.accountDraft = name.value; });
  const start = () => {
    app.accountDraft = name.value;
    app.accountError = "";
    error.hidden = true;
  };
  const done = () => {
    password.value = "";
    app.accountDraft = null;
    app.accountError = "";
    renderAccount(app);
  };
  const fail = (e) => {
    // Always a sentence in the page's words (kept as the refusal: a switch of language
    // words it again).
    const why = errorText(e);
    app.accountError = e;
    const shown = document.getElementById("account-error");
    if (shown) { shown.textContent = why; shown.hidden = false; }
    app.toast(why, "error");
  };
  register.addEventListener("click", () => {
    start();
    app.register(name.value.trim(), password.value).then(done, fail);
  });
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    start();
    app.login(name.value.trim(), password.value).then(done, fail);
  });
  box.append(h("p", { class: "small muted" }, t("account.guest")), form, error);
}

function playersLine(seats) {
  const players = h("span", { class: "players" });
  seats.forEach((x, i) => {
    if (i) players.append(h("span", { class: "vs" }, ` ${t("common.vs")} `));
    players.append(h("span", { class: `pname${x.kind === "bot" ? " bot" : ""}${x.name ? "" : " open"}` },
      seatName(x) || t("common.openSeat")));
    if (x.bot) players.append(" ", botTag());
    if (x.rating != null) players.append(h("span", { class: "rating", title: t("common.rating") }, ` (${x.rating})`));
    // Names are not unique: a short id tells two players of the same name apart.
    if (x.player_id) players.append(h("span", { class: "pid", title: t("common.playerId", { id: x.player_id }) }, `#${x.player_id.slice(0, 4)}`));
  });
  return players;
}

/** The games that ended last (the lobby's `recent`), each with a link to its review. */
export function renderRecent(app, recent, force = false) {
  const box = document.getElementById("recent-list");
  const panel = document.getElementById("recent-panel");
  if (!box || !panel || !recent) return;
  const sig = JSON.stringify(recent);
  if (!force && box.dataset.sig === sig) return;
  box.dataset.sig = sig;
  clear(box);
  panel.hidden = !recent.length;
  const ul = h("ul", { class: "room-items" });
  for (const r of recent) {
    ul.append(h("li", { class: "room-item recent-item", "data-room": r.room_id },
      gameIcon(r.game),
      h("span", { class: "room-info" },
        h("span", { class: "room-game" }, gameTitle(r.game)),
        playersLine(r.seats)),
      h("span", { class: "recent-result small" }, resultText({ ...r, your_seats: [] })),
      h("span", { class: "room-actions" },
        h("a", { class: "btn primary small review-link", href: reviewHref(r.room_id) }, t("common.review")),
        h("a", { class: "btn small", href: `#/watch/${r.room_id}` }, t("common.replay")))));
  }
  box.append(ul);
}

export function renderRooms(app, rooms, force = false) {
  const box = document.getElementById("rooms-list");
  if (!box || !rooms) return;
  const adjourned = app.adjourned || [];
  const sig = JSON.stringify(rooms) + "|" + [...app.myRooms].join(",") + "|" + adjourned.join(",");
  if (!force && box.dataset.sig === sig) return;
  box.dataset.sig = sig;
  clear(box);
  if (adjourned.length) {
    box.append(h("div", { id: "adjourned", class: "notice" },
      h("p", { class: "small" }, t("lobby.adjourned")),
      h("ul", { class: "room-items" }, ...adjourned.map((id) => h("li", { class: "room-item st-adjourned" },
        h("span", { class: "room-info" }, t("lobby.roomId", { id })),
        h("a", { class: "btn primary small", href: `#/room/${id}` }, t("common.resume")))))));
  }
  const count = document.getElementById("rooms-count");
  if (count) count.textContent = t("lobby.roomCount", { count: rooms.length });
  if (!rooms.length) {
    box.append(h("p", { class: "muted" }, t("lobby.noRooms")));
    return;
  }
  const ul = h("ul", { class: "room-items" });
  for (const r of rooms) {
    const mine = app.myRooms.has(r.room_id);
    const open = r.seats.some((x) => x.kind === "human" && !x.name);
    const players = playersLine(r.seats);
    const actions = h("span", { class: "room-actions" });
    if (mine && r.status !== "finished") {
      actions.append(h("a", { class: "btn primary small", href: `#/room/${r.room_id}` }, t("common.resume")));
    } else if (open && r.status === "waiting") {
      actions.append(h("a", { class: "btn primary small", href: `#/room/${r.room_id}` }, t("common.join")));
    }
    actions.append(h("a", { class: "btn small", href: `#/watch/${r.room_id}` }, r.status === "finished" ? t("common.replay") : t("common.watch")));
    ul.append(h("li", { class: `room-item st-${r.status}`, "data-room": r.room_id },
      gameIcon(r.game),
      h("span", { class: "room-info" },
        h("span", { class: "room-game" }, gameTitle(r.game), r.rated ? h("span", { class: "tag rated" }, " ", t("common.ratedTag")) : ""),
        players),
      h("span", { class: `status-pill ${r.status}` }, tWord("status", r.status)),
      h("span", { class: "spec", title: t("common.spectators") }, t("room.watching", { count: r.spectators })),
      actions));
  }
  box.append(ul);
}

// Backgammon's seats are colours: the opening roll, not the seat, decides who moves first.
const SEAT_LABELS = {
  backgammon: ["lobby.seatWhite", "lobby.seatBlack", "lobby.seatRandom"],
  other: ["lobby.seatFirst", "lobby.seatSecond", "lobby.seatRandom"],
};

function seatLabels(select, game) {
  const labels = SEAT_LABELS[game === "backgammon" ? "backgammon" : "other"];
  [...select.options].forEach((o, i) => { o.textContent = t(labels[i]); });
  select.title = game === "backgammon" ? t("lobby.seatColourTitle") : "";
}
