// The room view: board, players, turn, moves, result, chat, analysis, dice verification.
import { h, clear, fmtClock } from "./dom.js";
import { gameTitle, gameRules, moveText, pieceName, reasonText, historySeats, playDice, cubeNotes, gameEnds,
  matchScore, RESIGN_KINDS, resignKind, seatName as shownName } from "./notation.js";
import { verifyDice, randomSeatSeed } from "./dice.js";
import { t, tParts, fmtNumber, fmtSigned, errorText } from "./i18n.js";
import { offerButtons, renderPlayOffer, ratingChangeLine, gameKind, chatAudience, audienceTag,
  renderTournamentLink } from "./room-extras.js";
import * as ttt from "./boards/tictactoe.js";
import * as grundy from "./boards/grundy.js";
import * as drop from "./boards/drop.js";
import * as bg from "./boards/backgammon.js";

const BOARDS = { tictactoe: ttt, grundy, connect4: drop, boom: drop, backgammon: bg };

export function boardModule(game) {
  return BOARDS[game] || null;
}

/** Builds the static skeleton of the room view once per room. */
export function mountRoom(app, root, roomId) {
  clear(root);
  const chatInput = h("input", { id: "chat-input", maxlength: 500, placeholder: t("room.chatPlaceholder"),
    autocomplete: "off", "aria-label": t("room.chatLabel") });
  const chatForm = h("form", { id: "chat-form", class: "chat-form" }, chatInput,
    h("button", { class: "btn", type: "submit" }, t("room.send")));
  chatForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = chatInput.value.trim();
    if (!text) return;
    app.chat(text);
    chatInput.value = "";
  });
  const view = h("section", { class: "room-view", id: "room-view", "data-room": roomId },
    h("div", { class: "room-main" },
      h("div", { class: "room-title" },
        h("a", { href: "#/", class: "back", "aria-label": t("room.backLabel") }, t("room.back")),
        h("h2", { id: "room-game" }, ""),
        h("span", { id: "room-kind", class: "muted small" }, ""),
        h("a", { id: "room-tournament", class: "small", hidden: true }, ""),
        h("span", { id: "room-spectators", class: "spec", title: t("common.spectators") }, "")),
      h("div", { class: "seat-card", id: "card-top" }),
      h("div", { class: "board-area" },
        h("div", { id: "board-holder", class: "board-holder" }, h("p", { class: "muted" }, t("room.loading"))),
        h("div", { id: "banner", class: "banner", hidden: true })),
      h("div", { class: "seat-card", id: "card-bottom" }),
      h("div", { id: "controls", class: "controls" }),
      h("p", { id: "hint", class: "hint" })),
    h("aside", { class: "room-side" },
      h("div", { class: "panel status-panel" },
        h("div", { id: "turn", class: "turn", role: "status", "aria-live": "polite" }),
        h("div", { id: "resign-offer", class: "resign-offer", role: "status", hidden: true }),
        h("div", { id: "play-offer", class: "resign-offer", role: "status", "aria-live": "polite", hidden: true }),
        h("div", { id: "room-actions", class: "row" }),
        h("div", { id: "share", class: "share" })),
      h("div", { class: "panel rules", id: "rules", hidden: true }),
      h("div", { class: "panel", id: "analysis-panel", hidden: true }),
      h("div", { class: "panel moves-panel" }, h("h3", {}, t("room.moves")),
        h("ol", { id: "movelist", class: "movelist" })),
      h("div", { class: "panel", id: "dice-panel", hidden: true }),
      h("div", { class: "panel chat" }, h("h3", {}, t("room.chat")),
        h("div", { id: "chatlog", class: "chatlog", "aria-live": "polite" }), chatForm)));
  root.append(view);
  loadChatBacklog(roomId);
}

/** The room's chat so far (GET /api/rooms/{id}: its last 100 lines), so that it survives a
 * reload: put before the lines that came live meanwhile, a line that came both ways once. */
function loadChatBacklog(roomId) {
  fetch(`/api/rooms/${encodeURIComponent(roomId)}`)
    .then((r) => (r.ok ? r.json() : null))
    .then((record) => {
      const log = document.getElementById("chatlog");
      const view = document.getElementById("room-view");
      if (!record || !Array.isArray(record.chat) || !log || !view || view.dataset.room !== roomId) return;
      const shown = new Set([...log.children].map((el) => el.dataset.key));
      const first = log.firstChild;
      for (const m of record.chat) if (!shown.has(chatKey(m))) log.insertBefore(chatLine(m), first);
      log.scrollTop = log.scrollHeight;
    })
    .catch(() => {}); // the live chat still works without its past
}

export function viewSeat(room) {
  const mine = room.your_seats || [];
  if (mine.includes(room.to_move)) return room.to_move;
  return mine.length ? mine[0] : 0;
}

export function canMove(app, room) {
  return room.status === "playing" && (room.your_seats || []).includes(room.to_move) &&
    room.legal_moves.length > 0 && app.sentPly !== room.ply;
}

function seatCard(app, room, seat, el) {
  clear(el);
  const s = room.seats[seat] || { kind: "human", name: null };
  const mine = (room.your_seats || []).includes(seat);
  el.className = `seat-card seat-${seat}${room.status === "playing" && room.to_move === seat ? " to-move" : ""}`;
  el.dataset.seat = seat;
  const name = h("span", { class: "name" }, shownName(s) || t("room.openSeat"));
  const tags = h("span", { class: "tags" });
  if (mine) tags.append(h("span", { class: "tag you" }, t("room.you")));
  // A house bot, or a bot account (a program behind a registered name: contract section 12).
  if (s.kind === "bot" || s.bot) tags.append(h("span", { class: "tag bot", title: t("room.botTitle") }, t("common.bot")));
  if (s.kind === "human" && s.name) {
    tags.append(h("span", { class: `dot ${s.connected ? "on" : "off"}`, title: s.connected ? t("room.connected") : t("room.away") }));
  }
  // Anyone may take any name: the start of the player id tells two people of one name apart.
  if (s.kind === "human" && s.player_id) {
    tags.append(h("span", { class: "pid", title: t("common.playerId", { id: s.player_id }) }, `#${s.player_id.slice(0, 4)}`));
  }
  if (s.rating != null) tags.append(h("span", { class: "tag rating", title: t("room.ratingTitle", { game: gameTitle(room.game) }) }, String(s.rating)));
  const mod = boardModule(room.game);
  const extra = mod && mod.cardExtra ? mod.cardExtra(room, seat) : pieceName(room.game, seat);
  el.append(h("span", { class: `swatch g-${room.game} s${seat}`, "aria-hidden": "true" }),
    h("span", { class: "who" }, name, tags, h("span", { class: "extra" }, extra)));
  if (Array.isArray(room.clocks)) {
    el.append(h("span", { class: `clock${room.clock_running === seat ? " running" : ""}`, "data-clock": seat },
      fmtClock(clockValue(room, seat))));
  }
  if (!s.name && s.kind === "human" && room.status === "waiting" && !(room.your_seats || []).length) {
    // Games with dice: the seat's seed goes with the join (the opening roll may follow it).
    const seed = Array.isArray(room.seeds) ? seedField(`join-seed-${seat}`) : null;
    el.append(h("button", { class: "btn primary small", id: `take-seat-${seat}`,
      on: { click: () => app.takeSeat(seat, seed ? seed.input.value : "") } }, t("room.takeSeat")));
    if (seed) el.append(seed.label);
  }
  if (room.status === "playing" && room.to_move === seat) {
    el.append(h("span", { class: "turn-flag" }, mine ? t("room.yourMoveFlag") : t("room.toMoveFlag")));
  }
}

export function clockValue(room, seat) {
  if (!Array.isArray(room.clocks)) return null;
  let ms = room.clocks[seat];
  if (room.clock_running === seat && room.status === "playing" && room.clockAt) {
    ms -= Date.now() - room.clockAt;
  }
  return ms;
}

export function tickClocks(room) {
  if (!room || !Array.isArray(room.clocks)) return;
  for (const el of document.querySelectorAll("[data-clock]")) {
    const seat = Number(el.dataset.clock);
    const ms = clockValue(room, seat);
    el.textContent = fmtClock(ms);
    el.classList.toggle("low", ms !== null && ms < 20000);
  }
}

function turnText(app, room) {
  const mine = room.your_seats || [];
  const seatName = (i) => shownName(room.seats[i]) || pieceName(room.game, i);
  if (room.status === "waiting") {
    return mine.length ? t("turn.waitingOpponent") : t("turn.waitingPlayers");
  }
  if (room.status === "finished") return resultText(room);
  if (room.status === "adjourned") {
    return mine.length ? t("turn.adjournedMine") : t("turn.adjourned");
  }
  if (room.status === "closed") return t("turn.closed");
  const tm = room.to_move;
  if (tm === null || tm === undefined) return "…";
  if (mine.includes(tm)) {
    if (room.game === "backgammon") {
      const ph = room.state.phase;
      if (ph === "roll") return t("turn.yourRoll");
      if (ph === "take") return t("turn.yourTake");
    }
    return t("turn.yours");
  }
  const s = room.seats[tm];
  return s && s.kind === "bot" ? t("turn.thinking", { name: seatName(tm) }) : t("turn.waitingFor", { name: seatName(tm) });
}

export function resultText(room) {
  const r = room.result;
  if (!r) return t("result.over");
  const mine = room.your_seats || [];
  // Points mean something where a game can be worth more than one: backgammon's cube and
  // gammons, or any game that scored more than the usual single point.
  const withPts = r.points && (room.game === "backgammon" || r.points > 1);
  if (r.reason === "expired") return t("result.expired");
  // No draw: nobody played it out, and no rating moved (contract section 10).
  if (r.reason === "aborted") return t("result.aborted");
  if (r.winner === null || r.winner === undefined) {
    return withPts ? t("result.drawPoints", { why: reasonText(r.reason), count: r.points })
      : t("result.draw", { why: reasonText(r.reason) });
  }
  const seatName = (i) => shownName(room.seats[i]) || pieceName(room.game, i);
  // A game won because the other player stayed away: say who left.
  const why = r.reason === "abandoned" ? t("result.left", { name: seatName(1 - r.winner) }) : reasonText(r.reason);
  const who = mine.length === 1 ? (mine[0] === r.winner ? "you" : "youLose") : "they";
  const name = seatName(r.winner);
  // A backgammon match: the room's result is the match's; say so, with the final score.
  const st = room.state || {};
  if (st.match_to) {
    const score = matchScore(room);
    return t(`result.match.${who}`, { name, why, count: st.match_to, a: score[0], b: score[1] });
  }
  if (withPts) return t(`result.points.${who}`, { name, why, count: r.points });
  return t(`result.plain.${who}`, { name, why });
}

// Why a game asked rated was not (the snapshot's unrated_reason; contract sections 10, 16).
const UNRATED = {
  shared_address: "Not rated: its players connected from the same address in the last 30 days.",
  pair_cap: "Not rated: its players had already played 10 rated games in the last 24 hours.",
};

// Rooms whose result box the player put away: a later redraw (a rematch offer, a snapshot)
// must not bring it back over their study of the final position.
const bannerHidden = new Set();

function renderBanner(app, room) {
  const el = document.getElementById("banner");
  if (room.status !== "finished") { el.hidden = true; clear(el); return; }
  el.hidden = bannerHidden.has(room.room_id);
  clear(el);
  const mine = room.your_seats || [];
  const r = room.result || {};
  const win = mine.length === 1 && r.winner === mine[0];
  const lose = mine.length === 1 && r.winner !== null && r.winner !== undefined && r.winner !== mine[0];
  el.className = `banner${win ? " win" : lose ? " lose" : ""}`;
  el.append(h("div", { class: "banner-text", id: "result-text" }, resultText(room)));
  const unrated = UNRATED[room.unrated_reason];
  if (unrated) el.append(h("div", { class: "small muted", id: "unrated-note" }, unrated));
  const change = ratingChangeLine(room);
  if (change) el.append(change);
  const row = h("div", { class: "row" });
  const again = rematchControl(app, room, null);
  if (again) row.append(again);
  row.append(h("a", { class: "btn", id: "review-link", href: reviewHref(room.room_id) }, t("room.reviewGame")));
  row.append(h("a", { class: "btn", href: "#/" }, t("common.lobby")));
  row.append(h("button", { class: "btn ghost", on: { click: () => { bannerHidden.add(room.room_id); el.hidden = true; } } }, t("room.hide")));
  el.append(row);
}

/** The review page of a finished room (relative: it sits beside the page, /review/{id}). */
export function reviewHref(roomId) {
  return `review/${encodeURIComponent(roomId)}`;
}

/** The rematch control of a finished room. Whether someone opened a rematch comes only from
 * the server's rematch_offer (kept in app.rematchOffers), never from a chat line. */
function rematchControl(app, room, idPrefix) {
  const id = (suffix) => (idPrefix ? `${idPrefix}-${suffix}` : null);
  const mine = room.your_seats || [];
  const offer = app.rematchOffers.get(room.room_id);
  if (offer && app.me && offer.player_id === app.me.player_id) {
    return h("span", { class: "tag", id: id("offered") }, t("room.rematchOffered"));
  }
  if (offer) {
    const title = t("room.rematchOpened", { name: offer.name });
    return mine.length
      ? h("a", { class: "btn primary", id: id("join"), title, href: `#/room/${offer.new_room_id}` }, t("room.joinRematch"))
      : h("a", { class: "btn", id: id("watch"), title, href: `#/watch/${offer.new_room_id}` }, t("room.watchRematch"));
  }
  if (!mine.length) return null;
  return h("button", { class: "btn primary", id: id("btn"), on: { click: () => app.rematch() } }, t("room.rematch"));
}

// A two-click confirmation outlives redraws: an update that arrives between the clicks
// (the opponent moved) rebuilds the buttons, and the player must not have to start over.
const armedUntil = new Map(); // confirmation key -> Date.now() when it lapses

function confirmButton(key, attrs, label, armedLabel, act) {
  const b = h("button", attrs, label);
  const show = () => {
    const left = (armedUntil.get(key) || 0) - Date.now();
    if (left > 0) {
      b.dataset.armed = "1";
      b.textContent = armedLabel;
      setTimeout(() => { if (b.isConnected) show(); }, left + 10);
    } else {
      armedUntil.delete(key);
      delete b.dataset.armed;
      b.textContent = label;
    }
  };
  b.addEventListener("click", () => {
    if ((armedUntil.get(key) || 0) > Date.now()) { armedUntil.delete(key); act(); return; }
    armedUntil.set(key, Date.now() + 4000);
    show();
  });
  show();
  return b;
}

// Which tournaments are arenas (contract section 19), asked once each: an arena game's
// players may go berserk before their first move.
const arenas = new Map();

function isArena(app, room) {
  const tid = room.room_options && room.room_options.tournament_id;
  if (!tid) return false;
  if (!arenas.has(tid)) {
    arenas.set(tid, undefined);
    fetch(`api/tournaments/${encodeURIComponent(tid)}`).then((r) => (r.ok ? r.json() : null))
      .then((t) => {
        arenas.set(tid, !!t && t.format === "arena");
        if (app.room && app.room.room_id === room.room_id) renderActions(app, app.room);
      }).catch(() => arenas.delete(tid));
  }
  return arenas.get(tid) === true;
}

// The rooms whose berserk this page has asked for (the server refuses a second).
const berserked = new Set();

function renderActions(app, room) {
  const el = document.getElementById("room-actions");
  clear(el);
  const mine = room.your_seats || [];
  if (mine.length === 1 && room.status === "playing" && isArena(app, room)
      && !berserked.has(room.room_id) && (room.history || []).length <= mine[0]) {
    el.append(h("button", { class: "btn", id: "berserk-btn",
      title: t("room.berserkTitle"),
      on: { click: () => {
        berserked.add(room.room_id);
        app.conn.request({ type: "berserk", room_id: room.room_id })
          .catch((e) => app.toast(errorText(e), "error"));
        renderActions(app, room);
      } } }, t("room.berserk")));
  }
  if (mine.length && room.status === "playing") {
    if (room.abortable) {
      el.append(h("button", { class: "btn", id: "abort-btn", title: t("room.abortTitle"),
        on: { click: () => app.abort() } }, t("room.abort")));
    }
    // The opponent's seat is the one not ours; its player has left if the server says since when.
    const away = (room.away_since_ms || []).filter((t, i) => t !== null && !mine.includes(i));
    if (mine.length === 1 && away.length) el.append(claimButton(app, Math.min(...away), room.claim_after_ms));
    // Backgammon: give up this game for a single, a gammon or a backgammon, which the
    // opponent accepts or declines; the plain button gives up the whole match at once.
    const money = room.game === "backgammon" && !room.state.match_to;
    const match = room.game === "backgammon" && room.state.match_to;
    const resign = confirmButton(`${room.room_id}:resign`, { class: "btn danger", id: "resign-btn" },
      money ? t("room.giveUpNow") : match ? t("room.resignMatch") : t("room.resign"),
      match ? t("room.resignMatchSure") : t("room.resignSure"), () => app.resign());
    // A money game's resignations are all one choice: offers of a value, or giving up now.
    if (room.game === "backgammon") el.append(resignGameControl(app, room, money ? resign : null));
    el.append(...offerButtons(app, room));
    if (!money) el.append(resign);
    const hand = confirmButton(`${room.room_id}:hand`,
      { class: "btn", id: "hand-to-bot-btn", title: t("room.handTitle") },
      t("room.hand"), t("room.handSure"), () => app.handToBot(viewSeat(room)));
    el.append(hand);
  }
  if (mine.length && room.status === "waiting") {
    // Nothing is lost by leaving before the game starts, so one click. A table the player
    // opened and nobody else sits at is closed by it, which frees one of their places under
    // the server's cap on waiting rooms.
    el.append(h("button", { class: "btn", id: "leave-seat-btn", title: t("room.leaveSeatTitle"),
      on: { click: () => app.leaveSeat() } }, t("room.leaveSeat")));
  }
  const again = room.status === "finished" && rematchControl(app, room, "rematch");
  if (again) el.append(again);
  // The result box may be put away: the side panel keeps the way to the review.
  if (room.status === "finished") {
    el.append(h("a", { class: "btn small", id: "review-game", href: reviewHref(room.room_id),
      title: t("room.reviewTitle") }, t("room.reviewGame")));
  }
  if (!mine.length) el.append(h("span", { class: "tag watch" }, t("room.watchingTag")));
  // An adjourned or closed room has no game going on: nothing to explain or to do.
  if (room.status === "waiting" || room.status === "playing") {
    const dice = room.state.phase === "move" && room.state.dice ? { dice: room.state.dice.join("") } : {};
    el.append(h("a", { class: "btn small", id: "explain-position", target: "_blank", title: t("room.explainTitle"),
      href: `explain?${new URLSearchParams({ game: room.game, position: room.state.notation || "", ...dice })}` }, t("room.explain")));
  }
  const share = document.getElementById("share");
  clear(share);
  if (room.status === "closed") return;  // nobody can join it any more
  const url = `${location.origin}${location.pathname}#/room/${room.room_id}`;
  const input = h("input", { readonly: true, value: url, id: "share-url", "aria-label": t("room.shareLabel") });
  input.addEventListener("focus", () => input.select());
  share.append(h("label", { class: "muted small" }, room.status === "waiting" ? t("room.invite") : t("room.linkTo")),
    h("div", { class: "row nowrap" }, input,
      h("button", { class: "btn small", on: { click: () => copy(url) } }, t("room.copy"))));
  // The link is the address this browser used; a loopback one reaches this computer alone.
  if (/^(127\.|localhost$|\[::1\]$)/.test(location.hostname)) {
    share.append(h("p", { class: "muted small", id: "share-local" },
      ...tParts("room.shareLocal", { command: h("code", {}, "tablas serve --host 0.0.0.0") })));
  }
}

/** "Claim the win", counting down until the opponent has been away long enough (the
 * server's --claim-after, which a rated room's snapshot carries). */
function claimButton(app, awaySince, claimAfter) {
  const b = h("button", { class: "btn primary", id: "claim-win-btn", type: "button",
    title: t("room.claimTitle"),
    on: { click: () => app.claimWin() } }, t("room.claim"));
  const show = () => {
    if (!b.isConnected && b.dataset.shown) return;
    b.dataset.shown = "1";
    const left = claimAfter == null ? 0 : Math.ceil((awaySince + claimAfter - Date.now()) / 1000);
    b.disabled = left > 0;
    b.textContent = left > 0 ? t("room.claimIn", { count: left }) : t("room.claim");
    if (left > 0) setTimeout(show, 1000);
  };
  show();
  return b;
}

// Rooms whose "Resign this game" choices are open: a redraw (an update) keeps them open.
const resignOpen = new Set();

/** The backgammon offer to resign the current game: a single, a gammon or a backgammon,
 * each worth its points times the cube (contract section 8). */
function resignGameControl(app, room, atOnce) {
  const cube = (room.state.cube && room.state.cube.value) || 1;
  const box = h("details", { class: "resign-game", id: "resign-game" },
    h("summary", { class: "btn" }, t("room.resignGame")));
  box.open = resignOpen.has(room.room_id);
  box.addEventListener("toggle", () => {
    if (box.open) resignOpen.add(room.room_id); else resignOpen.delete(room.room_id);
  });
  const row = h("div", { class: "row" });
  for (const points of [1, 2, 3]) {
    const pts = points * cube;
    row.append(h("button", { class: "btn small", id: `resign-${RESIGN_KINDS[points]}`,
      disabled: !!room.resign_offer, title: t("room.resignOfferTitle", { count: pts }),
      on: { click: () => { resignOpen.delete(room.room_id); app.offerResign(points); } } },
      t("room.resignChoice", { kind: resignKind(points), count: pts })));
  }
  if (atOnce) row.append(atOnce);
  box.append(row);
  return box;
}

/** A resignation waiting for its answer: the side facing it accepts or declines; everyone
 * else sees it. */
function renderOffer(app, room) {
  const el = document.getElementById("resign-offer");
  const o = room.status === "playing" ? room.resign_offer : null;
  clear(el);
  const declined = room.status === "playing" && room.resign_declined != null && !o;
  el.hidden = !o && !declined;
  if (declined) {
    const mine = (room.your_seats || []).includes(room.resign_declined);
    el.append(h("p", { id: "resign-declined-text", class: "declined" },
      mine ? t("room.yourResignDeclined") : t("room.resignDeclined")));
    return;
  }
  if (!o) return;
  const mine = room.your_seats || [];
  const cube = (room.state.cube && room.state.cube.value) || 1;
  const pts = o.points * cube;
  const kind = resignKind(o.points);
  const who = shownName(room.seats[o.seat]) || pieceName(room.game, o.seat);
  if (mine.includes(1 - o.seat)) {
    const them = mine.includes(o.seat) ? t("room.thisSeat") : who;
    el.append(h("p", { id: "resign-offer-text" }, t("room.resignOfferToYou", { name: them, kind, count: pts })),
      h("div", { class: "row" },
        h("button", { class: "btn primary", id: "accept-resign-btn", on: { click: () => app.acceptResign() } }, t("common.accept")),
        h("button", { class: "btn", id: "decline-resign-btn", on: { click: () => app.declineResign() } }, t("common.decline"))));
  } else if (mine.includes(o.seat)) {
    el.append(h("p", { id: "resign-offer-text" }, t("room.resignOfferMine", { kind, count: pts })));
  } else {
    el.append(h("p", { id: "resign-offer-text" }, t("room.resignOfferOthers", { name: who, kind, count: pts })));
  }
}

function copy(text) {
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(text).catch(() => {});
  }
}

function renderMoves(app, room) {
  const ol = document.getElementById("movelist");
  clear(ol);
  const seats = historySeats(room.game, room.history, room.rolls);
  const rollsAt = new Map();
  for (const r of room.rolls || []) {
    if (!rollsAt.has(r.ply)) rollsAt.set(r.ply, []);
    rollsAt.get(r.ply).push(r.dice);
  }
  if (room.game === "backgammon" && rollsAt.has(0)) {
    const d = rollsAt.get(0)[rollsAt.get(0).length - 1];
    ol.append(h("li", { class: "opening" }, t("room.openingRoll", { side0: pieceName("backgammon", 0), a: d[0], side1: pieceName("backgammon", 1), b: d[1] })));
  }
  // A backgammon play is written after the dice it was played with, a cube action with the
  // stake it names.
  const cube = room.game === "backgammon" ? cubeNotes(room.history, room.rolls) : new Map();
  const ends = room.game === "backgammon" ? gameEnds(room.history, room.rolls) : new Set();
  let line = 0;
  room.history.forEach((mv, i) => {
    const seat = seats[i];
    // A backgammon "roll" (no double) is no line of its own: its dice head the play after it.
    if (room.game === "backgammon" && mv.action === "roll") return;
    line += 1;
    const li = h("li", { class: `mv s${seat}${i === room.history.length - 1 ? " last" : ""}`, "data-ply": i + 1 },
      h("span", { class: "num" }, `${line}.`),
      h("span", { class: `swatch tiny g-${room.game} s${seat}`, "aria-hidden": "true" }));
    const dice = room.game === "backgammon" && mv.play ? playDice(room.rolls, i) : null;
    if (dice) li.append(h("span", { class: "mv-dice" }, `${dice.join("-")}: `));
    li.append(h("span", { class: "mv-text" }, cube.get(i) || moveText(room.game, mv)));
    ol.append(li);
    // A match's next game starts with its own opening roll.
    const next = ends.has(i) && rollsAt.get(i + 1);
    if (next) {
      const d = next[next.length - 1];
      ol.append(h("li", { class: "opening" }, t("room.newGameRoll", { side0: pieceName("backgammon", 0), a: d[0], side1: pieceName("backgammon", 1), b: d[1] })));
    }
  });
  if (!room.history.length && !ol.children.length) ol.append(h("li", { class: "muted empty" }, t("room.noMoves")));
  ol.scrollTop = ol.scrollHeight;
}

// An analysis says how to read its score (score_unit, score_typical) and whether it is a proof
// (proven, distance): the page knows nothing of the engine's numbers.
function scoreText(a) {
  if (a.proven === "draw") return a.distance != null ? t("analysis.drawIn", { count: a.distance }) : t("analysis.draw");
  if (a.proven) return t(a.proven === "win" ? "analysis.winsIn" : "analysis.losesIn", { count: a.distance });
  const score = Number(a.score) || 0;
  if (a.score_unit === "equity") return fmtSigned(score, 3);
  return fmtSigned(Math.round(score));
}

/** How to read a score, as the analysis itself says (its unit and the size of a clear edge). */
function unitText(a) {
  const typical = Number(a.score_typical) || 0;
  const unit = a.score_unit === "equity" ? "equity" : "points";
  return typical ? t(`analysis.unitEdge.${unit}`, { edge: fmtNumber(typical) }) : t(`analysis.unit.${unit}`);
}

function renderAnalysis(app, room) {
  const el = document.getElementById("analysis-panel");
  const a = app.analysis;
  // A finished game needs no forecast (nor an adjourned or closed one).
  if (!a || a.room_id !== room.room_id || a.ply < room.ply - 1 || room.status !== "playing") {
    el.hidden = true;
    return;
  }
  el.hidden = false;
  clear(el);
  let frac;
  if (a.proven) frac = a.proven === "win" ? 1 : a.proven === "loss" ? 0 : 0.5;
  else frac = 0.5 + 0.5 * Math.tanh((Number(a.score) || 0) / (a.score_typical || 1));
  const p0 = a.seat === 0 ? frac : 1 - frac;  // seat 0's share of the bar
  const name = (i) => shownName(room.seats[i]) || pieceName(room.game, i);
  el.append(h("h3", {}, t("analysis.title"), a.final ? "" : h("span", { class: "live" }, ` · ${t("analysis.live")}`)),
    h("div", { class: "evalbar", role: "img", "aria-label": t("analysis.barLabel", { share: fmtNumber(p0, { style: "percent" }), name: name(0) }) },
      h("div", { class: `evalfill g-${room.game}`, style: { width: `${(p0 * 100).toFixed(1)}%` } })),
    h("div", { class: "evalrow small" },
      h("span", {}, name(0)), h("span", { class: "evalscore" }, `${name(a.seat)}: ${scoreText(a)}`),
      h("span", {}, name(1))),
    ...(a.proven ? [] : [h("div", { class: "small muted score-unit" }, unitText(a))]),
    h("div", { class: "small muted" }, t("analysis.stats", { depth: a.depth ?? "?", nodes: fmtNumber(Number(a.nodes || 0)), ply: a.ply })),
    h("div", { class: "pv small" }, t("analysis.pv"), " ",
      (a.pv || []).map((m) => (typeof m === "string" ? m : moveText(room.game, m))).join("  ")));
}

function renderDicePanel(app, room) {
  const el = document.getElementById("dice-panel");
  if (!room.dice_commitment) { el.hidden = true; return; }
  el.hidden = false;
  if (el.dataset.key === `${room.room_id}:${room.status}:${room.rolls.length}` && el.dataset.verified) return;
  el.dataset.key = `${room.room_id}:${room.status}:${room.rolls.length}`;
  delete el.dataset.verified;
  clear(el);
  el.append(h("h3", {}, t("dice.title")),
    h("p", { class: "small muted" }, t("dice.committed")),
    h("code", { class: "hash", id: "dice-commitment", title: room.dice_commitment }, room.dice_commitment));
  if (Array.isArray(room.seeds)) {
    el.append(h("p", { class: "small", id: "dice-seeds" }, ...tParts("dice.seeds", {
      a: h("code", {}, room.seeds[0] || t("dice.none")), b: h("code", {}, room.seeds[1] || t("dice.none")) })));
  }
  if (room.dice_seed) {
    const out = h("div", { id: "dice-verify-out" });
    el.append(h("p", { class: "small" }, ...tParts("dice.revealed", { seed: h("code", { class: "hash" }, room.dice_seed) })),
      h("button", { class: "btn", id: "verify-dice", on: { click: () => runVerify(room, out, el) } }, t("dice.verify")),
      out);
  } else {
    el.append(h("p", { class: "small muted" }, t("dice.later")));
  }
}

/** An optional dice seed (docs/dice.md): typed, or drawn by the "random" button. */
export function seedField(id) {
  const input = h("input", { type: "text", id, class: "seed-input", maxlength: 64, size: 12,
    pattern: "[0-9A-Za-z]{0,64}", placeholder: t("dice.seedPlaceholder"), title: t("dice.seedTitle") });
  const label = h("label", { class: "small seed-field" }, t("dice.seed"), " ", input,
    h("button", { type: "button", class: "btn small", id: `${id}-random`,
      on: { click: () => { input.value = randomSeatSeed(); } } }, t("dice.random")));
  return { input, label };
}

async function runVerify(room, out, panel) {
  clear(out);
  out.append(h("p", { class: "muted small" }, t("dice.checking")));
  try {
    const res = await verifyDice(room.room_id, room.dice_seed, room.dice_commitment, room.rolls,
      false, room.seeds);
    clear(out);
    panel.dataset.verified = "1";
    out.append(h("p", { class: `verdict ${res.ok ? "ok" : "bad"}`, id: "dice-verdict" },
      res.ok ? t("dice.allMatch", { count: res.rows.length }) :
        res.commitmentOk ? t("dice.someDiffer") : t("dice.seedDiffers")));
    out.append(h("p", { class: "small" }, res.commitmentOk ? t("dice.commitmentOk") : t("dice.commitmentBad")));
    const table = h("table", { class: "dice-table" },
      h("thead", {}, h("tr", {}, h("th", {}, t("dice.afterPly")), h("th", {}, t("dice.shown")), h("th", {}, t("dice.recomputed")), h("th", {}, ""))));
    const tb = h("tbody");
    for (const r of res.rows) {
      tb.append(h("tr", { class: r.ok ? "ok" : "bad" }, h("td", {}, String(r.ply)), h("td", {}, r.shown.join("-")),
        h("td", {}, r.computed.join("-")), h("td", {}, r.ok ? "✔" : "✘")));
    }
    table.append(tb);
    out.append(table);
  } catch (e) {
    clear(out);
    out.append(h("p", { class: "verdict bad" }, t("dice.failed", { why: e && e.message ? e.message : String(e) })));
  }
}

/** Redraws the whole room from app.room. */
export function renderRoom(app, fresh = false) {
  const room = app.room;
  if (!room || !document.getElementById("room-view")) return;
  document.getElementById("room-game").textContent = room.game === "grundy" && room.options && room.options.heap
    ? t("room.grundyHeap", { game: gameTitle(room.game), n: room.options.heap }) : gameTitle(room.game);
  document.getElementById("room-spectators").textContent = t("room.watching", { count: room.spectators || 0 });
  document.getElementById("room-kind").textContent = gameKind(room);
  renderTournamentLink(app, room);
  renderRules(room);
  const v = viewSeat(room);
  seatCard(app, room, 1 - v, document.getElementById("card-top"));
  seatCard(app, room, v, document.getElementById("card-bottom"));
  const turn = document.getElementById("turn");
  turn.textContent = turnText(app, room);
  const mine = room.your_seats || [];
  const lost = room.status === "finished" && room.result && mine.length === 1 &&
    room.result.winner !== null && room.result.winner !== mine[0];
  turn.className = `turn${canMove(app, room) ? " mine" : ""}${room.status === "finished" ? (lost ? " lost" : " over") : ""}`;
  renderBoard(app, fresh);
  renderBanner(app, room);
  renderOffer(app, room);
  renderPlayOffer(app, room);
  renderActions(app, room);
  renderMoves(app, room);
  renderAnalysis(app, room);
  renderDicePanel(app, room);
  document.title = `${canMove(app, room) ? "● " : ""}${gameTitle(room.game)} · Tablas`;
}

function renderRules(room) {
  const el = document.getElementById("rules");
  const text = gameRules(room.game);
  el.hidden = !text;
  if (el.dataset.game === room.game) return;
  el.dataset.game = room.game;
  clear(el);
  el.append(h("h3", {}, t("room.howToPlay")), h("p", { class: "rules-text" }, text));
}

export function boardCtx(app, fresh) {
  const room = app.room;
  if (!app.ui[room.room_id]) app.ui[room.room_id] = {};
  return {
    room,
    game: room.game,
    viewSeat: viewSeat(room),
    canMove: canMove(app, room),
    ui: app.ui[room.room_id],
    prev: fresh ? app.prevState : null,
    fresh,
    send: (move) => app.sendMove(move),
    rerender: () => renderBoard(app, false),
  };
}

export function renderBoard(app, fresh = false) {
  const room = app.room;
  const holder = document.getElementById("board-holder");
  if (!room || !holder) return;
  const mod = boardModule(room.game);
  clear(holder);
  const controls = document.getElementById("controls");
  clear(controls);
  const hint = document.getElementById("hint");
  if (!mod) {
    holder.append(h("p", {}, t("room.noBoard", { game: room.game, position: room.state.notation || "" })));
    return;
  }
  const ctx = boardCtx(app, fresh);
  const out = mod.render(ctx);
  out.svg.classList.add(ctx.canMove ? "can-move" : "idle");
  // The stylesheet sizes a board to the window's height from its proportions.
  const vb = out.svg.viewBox && out.svg.viewBox.baseVal;
  if (vb && vb.height) out.svg.style.setProperty("--ar", (vb.width / vb.height).toFixed(4));
  holder.append(out.svg);
  if (out.controls && out.controls.childNodes.length) controls.append(out.controls);
  hint.textContent = out.hint || "";
}

const chatKey = (m) => `${m.player_id}|${m.time}|${m.text}`;

function chatLine(m) {
  // Two chats a room, the players' and the spectators', each line marked with its own.
  const audience = chatAudience(m);
  const line = h("div", { class: `chat-line from-${audience}`, "data-key": chatKey(m), "data-audience": audience });
  const who = h("span", { class: "chat-name" }, m.name);
  // A chat line is text and only text (a text node, its newlines kept by the stylesheet):
  // whatever it says, it never becomes a link or a button.
  line.append(audienceTag(m), " ", who, h("span", { class: "sep" }, ": "), h("span", { class: "chat-text" }, m.text));
  return line;
}

export function appendChat(app, m) {
  const log = document.getElementById("chatlog");
  if (!log) return;
  log.append(chatLine(m));
  log.scrollTop = log.scrollHeight;
}

export function boardKey(app, ev) {
  if (!app.room) return false;
  const mod = boardModule(app.room.game);
  if (!mod || !mod.key) return false;
  return mod.key(boardCtx(app, false), ev);
}
