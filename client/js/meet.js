// Meeting an opponent (contract section 11): quick pairing (a seek), the open seeks of
// everyone (GET /api/seeks, asked every second while the lobby shows), challenges out and in,
// and how many are online (GET /api/stats).
import { h, clear } from "./dom.js";
import { GAMES, gameTitle } from "./notation.js";
import { syncList, showEmpty } from "./keyed.js";
import { t, tParts, fmtNumber, errorText } from "./i18n.js";

// The usual clocks, lichess-style "minutes + seconds per move"; "" is no clock.
export const PRESETS = [["1+0", 60, 0], ["3+2", 180, 2], ["5+0", 300, 0], ["10+5", 600, 5],
  ["30+0", 1800, 0]];
const SEEKS_EVERY_MS = 500;  // a seek made elsewhere shows within a second
const STATS_EVERY_MS = 5000;

function clockOf(value) {
  if (!value) return null;
  const [base, inc] = value.split(":").map(Number);
  return { base_ms: base, increment_ms: inc };
}

export function clockLabel(clock) {
  if (!clock) return t("meet.noClockShort");
  const inc = Math.round((clock.increment_ms || 0) / 1000);
  const base = clock.base_ms / 60000;
  return `${fmtNumber(base, { maximumFractionDigits: 1 })}+${inc}`;
}

function terms(game, clockValue, rated) {
  const out = { game, options: {}, clock: clockOf(clockValue), rated: !!rated };
  // A rated game has a clock (contract section 10): five minutes when none is chosen.
  if (out.rated && !out.clock) out.clock = { base_ms: 300000, increment_ms: 0 };
  return out;
}

function gameSelect(id, value) {
  return h("select", { id },
    Object.keys(GAMES).map((g) => h("option", { value: g, selected: g === value }, gameTitle(g))));
}

function clockSelect(id, value) {
  const el = h("select", { id }, h("option", { value: "" }, t("lobby.noClock")),
    PRESETS.map(([label, base, inc]) => h("option", { value: `${base * 1000}:${inc * 1000}` }, t("lobby.clockMin", { clock: label }))),
    h("option", { value: "custom" }, t("meet.custom")));
  // A custom clock chosen before is offered again as it was.
  if (/^\d+:\d+$/.test(value || "") && ![...el.options].some((o) => o.value === value)) {
    const [base, inc] = value.split(":").map(Number);
    el.insertBefore(h("option", { value }, t("lobby.clockMin", { clock: clockLabel({ base_ms: base, increment_ms: inc }) })), el.lastChild);
  }
  el.value = value;
  return el;
}

// A custom clock: minutes (a decimal allowed) + seconds added per move, as lichess writes it.
const CUSTOM = /^\s*(\d{1,3}(?:[.,]\d{1,2})?)\s*\+\s*(\d{1,2})\s*$/;

/** A clock picker: the presets, or "Custom…" and a field "minutes+seconds" (7+3). */
export function clockPicker(id, value) {
  const sel = clockSelect(id, value);
  const custom = h("input", { id: `${id}-custom`, class: "clock-custom", size: 6, maxlength: 9,
    placeholder: t("meet.customPlaceholder"), inputmode: "decimal", autocomplete: "off",
    "aria-label": t("meet.customLabel") });
  custom.hidden = sel.value !== "custom";
  sel.addEventListener("change", () => {
    custom.hidden = sel.value !== "custom";
    if (!custom.hidden) custom.focus();
  });
  return {
    el: h("span", { class: "clock-pick" }, sel, custom),
    /** The chosen clock as "base_ms:increment_ms" ("" for none); an Error if the custom one is bad. */
    value() {
      if (sel.value !== "custom") return sel.value;
      const m = CUSTOM.exec(custom.value);
      const base = m ? Math.round(Number(m[1].replace(",", ".")) * 60000) : 0;
      if (!m || base < 10000 || base > 180 * 60000) {
        custom.focus();
        throw new Error(t("meet.customBad"));
      }
      return `${base}:${Number(m[2]) * 1000}`;
    },
  };
}

/** The panel: quick pairing, the seeks on show, a challenge box, challenges received. */
export function renderMeet(app) {
  const box = document.getElementById("meet");
  if (!box) return;
  clear(box);
  const saved = JSON.parse(localStorage.getItem("tablas-seek") || "{}");
  const registered = !!(app.me && app.me.registered);
  const game = gameSelect("seek-game", saved.game || "connect4");
  const clock = clockPicker("seek-clock", saved.clock ?? "180000:2000");
  const rated = h("input", { type: "checkbox", id: "seek-rated", checked: registered && saved.rated !== false,
    disabled: !registered });
  const seekBtn = h("button", { class: "btn primary", type: "submit", id: "seek-btn" }, t("meet.find"));
  const quick = h("form", { class: "meet-quick", id: "seek-form", "aria-label": t("meet.quickLabel") },
    h("div", { class: "row" }, h("label", {}, t("common.game"), " ", game), h("label", {}, t("lobby.clock"), " ", clock.el),
      h("label", { title: registered ? t("meet.ratedTitle") : t("meet.registerToRate") },
        rated, " ", t("lobby.rated"))),
    seekBtn);
  quick.addEventListener("submit", (ev) => {
    ev.preventDefault();
    let chosen;
    try { chosen = clock.value(); } catch (e) { app.toast(e.message, "error"); return; }
    localStorage.setItem("tablas-seek", JSON.stringify({ game: game.value, clock: chosen,
      rated: rated.checked }));
    app.conn.request({ type: "seek", ...terms(game.value, chosen, rated.checked), rating_range: null })
      .then((m) => {
        app.mySeeks.add(m.seek_id);
        renderSeeks(app);
        // Unless paired at once (its "paired" came first): the toast goes when it pairs.
        if (app.mySeeks.has(m.seek_id)) app.seekToast = app.toast(t("meet.looking"));
      },
        (e) => app.toast(errorText(e), "error"));
  });

  const who = h("input", { id: "challenge-to", maxlength: 64, placeholder: t("meet.whoPlaceholder"),
    "aria-label": t("meet.whoLabel"), autocomplete: "off" });
  const cgame = gameSelect("challenge-game", saved.game || "connect4");
  const cclock = clockPicker("challenge-clock", saved.clock ?? "180000:2000");
  const crated = h("input", { type: "checkbox", id: "challenge-rated", disabled: !registered });
  const challenge = h("form", { class: "meet-challenge", id: "challenge-form", "aria-label": t("meet.challengeLabel") },
    h("div", { class: "row" }, who, h("label", {}, t("common.game"), " ", cgame), h("label", {}, t("lobby.clock"), " ", cclock.el),
      h("label", {}, crated, " ", t("lobby.rated"))),
    h("button", { class: "btn", type: "submit", id: "challenge-btn" }, t("meet.challenge")));
  challenge.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const to = who.value.trim();
    if (!to) { who.focus(); return; }
    sendChallenge(app, to, cgame.value, cclock, crated.checked);
  });
  app.challengeTerms = () => ({ game: cgame.value, clock: cclock, rated: crated.checked });
  cgame.addEventListener("change", () => renderOnline(app));  // each player's rating in it

  box.append(
    h("div", { class: "panel-head" }, h("h2", {}, t("meet.title")),
      h("span", { class: "muted", id: "online-count" }, app.stats ? statsText(app.stats) : "")),
    quick,
    h("h3", {}, t("meet.openSeeks")),
    h("div", { id: "seeks-list", class: "rooms-list" }, h("p", { class: "muted" }, t("common.loading"))),
    h("h3", {}, t("meet.challengeSomeone")),
    challenge,
    h("div", { id: "challenges", "aria-live": "polite" }),
    h("h3", {}, t("meet.whoIsOnline")),
    h("div", { id: "online-list", class: "rooms-list" }, h("p", { class: "muted" }, t("common.loading"))));
  renderSeeks(app);
  renderChallenges(app);
  renderOnline(app);
  if (app.pollOnline) app.pollOnline();
}

/** A challenge to `to` with the challenge form's game, clock and rated box. */
function sendChallenge(app, to, game, clock, rated) {
  let chosen;
  try { chosen = clock.value(); } catch (e) { app.toast(e.message, "error"); return; }
  app.conn.request({ type: "challenge", to, ...terms(game, chosen, rated) })
    .then((m) => { app.challengesOut.set(m.challenge_id, shownName(app, to)); renderChallenges(app); },
      (e) => app.toast(errorText(e), "error"));
}

/** A registered player's name as they wrote it, not as it was typed (names compare without
 * case or width: contract section 8), when the list of who is online has them. */
function shownName(app, typed) {
  const key = (s) => s.normalize("NFKC").toLowerCase().trim();
  const found = (app.online || []).find((p) => key(p.name) === key(typed));
  return found ? found.name : typed;
}

/** The registered players online now (GET /api/online), each with a Challenge button. */
export function renderOnline(app) {
  const list = document.getElementById("online-list");
  if (!list || !app.online) return;
  const me = app.me && app.me.player_id;
  const others = app.online.filter((p) => p.player_id !== me);
  if (!others.length) {
    showEmpty(list, h("p", { class: "muted", id: "no-online" }, t("meet.nobodyOnline")));
    return;
  }
  const terms0 = app.challengeTerms ? app.challengeTerms() : { game: "connect4" };
  syncList(list, others, (p) => p.player_id, (p) => JSON.stringify([p, terms0.game, !!(app.me && app.me.registered)]),
    (p) => onlineRow(app, p, terms0.game));
}

function onlineRow(app, p, game) {
  const r = p.ratings && p.ratings[game];
  const btn = h("button", { class: "btn small", type: "button", "data-challenge-player": p.player_id,
    title: t("meet.challengeTitle", { name: p.name }) }, t("meet.challenge"));
  btn.addEventListener("click", () => {
    const ct = app.challengeTerms();
    sendChallenge(app, p.name, ct.game, ct.clock, ct.rated);
  });
  return h("div", { class: "room-row online-row", "data-online": p.player_id },
    h("a", { class: "pname", href: `players/${encodeURIComponent(p.player_id)}` }, p.name),
    p.bot ? botTag() : null,
    h("span", { class: "muted small" }, r ? t("meet.ratingIn", { game: gameTitle(game), rating: String(Math.round(r.rating)) })
      : t("meet.unratedIn", { game: gameTitle(game) })),
    p.playing ? h("span", { class: "tag", title: t("meet.playingTitle") }, t("meet.playingTag")) : null,
    btn);
}

function statsText(st) {
  return t("meet.stats", { online: st.online, playing: st.playing });
}

/** The seeks on show, oldest first: "Play" takes one (accept_seek), "Cancel" withdraws one's own. */
export function renderSeeks(app) {
  const list = document.getElementById("seeks-list");
  if (!list || !app.seeks) return;
  if (!app.seeks.length) {
    showEmpty(list, h("p", { class: "muted", id: "no-seeks" }, t("meet.noSeeks")));
    return;
  }
  const me = app.me && app.me.player_id;
  // A row is rebuilt only when what it shows changed: a press on its button survives a poll.
  syncList(list, app.seeks, (sk) => sk.seek_id, (sk) => JSON.stringify([sk, sk.player.player_id === me]),
    (sk) => seekRow(app, sk));
}

function seekRow(app, sk) {
  const mine = app.me && sk.player.player_id === app.me.player_id;
  const btn = mine
    ? h("button", { class: "btn small", type: "button", "data-cancel": sk.seek_id }, t("common.cancel"))
    : h("button", { class: "btn primary small", type: "button", "data-accept": sk.seek_id }, t("meet.play"));
  btn.addEventListener("click", () => {
    const msg = mine ? { type: "cancel_seek", seek_id: sk.seek_id } : { type: "accept_seek", seek_id: sk.seek_id };
    app.conn.request(msg).then(() => { app.mySeeks.delete(sk.seek_id); app.pollSeeks(); },
      (e) => { app.toast(errorText(e), "error"); app.pollSeeks(); });
  });
  const range = sk.rating_range ? ` · ${Math.round(sk.rating_range[0])}–${Math.round(sk.rating_range[1])}` : "";
  return h("div", { class: "room-row seek-row", "data-seek": sk.seek_id },
    h("span", { class: "room-game" }, gameTitle(sk.game)),
    h("span", { class: "players" }, sk.player.name, sk.player.bot ? botTag() : null, ` · ${sk.player.rating}`),
    h("span", { class: "muted small" }, `${clockLabel(sk.clock)} · ${sk.rated ? t("meet.rated") : t("meet.casual")}${range}`),
    btn);
}

/** The mark of a program: a bot account or a house bot (contract section 12). */
export function botTag() {
  return h("span", { class: "tag bot", title: t("room.botTitle") }, t("common.bot"));
}

/** Challenges received (Accept / Decline) and sent (Cancel). */
export function renderChallenges(app) {
  const box = document.getElementById("challenges");
  if (!box) return;
  clear(box);
  for (const [id, c] of app.challengesIn) {
    const accept = h("button", { class: "btn primary small", type: "button", "data-accept-challenge": id }, t("common.accept"));
    const decline = h("button", { class: "btn small", type: "button", "data-decline-challenge": id }, t("common.decline"));
    accept.addEventListener("click", () => app.answerChallenge(id, true));
    decline.addEventListener("click", () => app.answerChallenge(id, false));
    box.append(h("div", { class: "room-row challenge-in", "data-challenge": id, role: "group",
      "aria-label": t("meet.challengeFrom", { name: c.from.name }) },
      h("span", {}, ...tParts("meet.challengesYou", { name: h("strong", {}, c.from.bot ? [c.from.name, " ", botTag()] : c.from.name),
        rating: String(c.from.rating) })),
      h("span", { class: "muted small" }, `${gameTitle(c.game)} · ${clockLabel(c.clock)} · ${c.rated ? t("meet.rated") : t("meet.casual")}`),
      accept, decline));
  }
  for (const [id, to] of app.challengesOut) {
    const cancel = h("button", { class: "btn small", type: "button" }, t("common.cancel"));
    cancel.addEventListener("click", () => {
      (app.cancelingChallenge ??= new Set()).add(id);  // one's own cancel needs no news
      app.conn.request({ type: "cancel_challenge", challenge_id: id })
        .catch(() => {}).finally(() => { app.challengesOut.delete(id); renderChallenges(app); });
    });
    box.append(h("div", { class: "room-row challenge-out", "data-challenge-out": id },
      h("span", {}, t("meet.waitingAnswer", { name: to })), cancel));
  }
}

/** What the page keeps of meeting an opponent, and the messages that change it. */
export class Meeting {
  constructor(app) {
    this.app = app;
    app.seeks = null;
    app.stats = null;
    app.mySeeks = new Set();
    app.challengesIn = new Map();
    app.challengesOut = new Map();
    app.online = null;
    setInterval(() => this.pollSeeks(), SEEKS_EVERY_MS);
    setInterval(() => this.pollStats(), STATS_EVERY_MS);
    setInterval(() => this.pollOnline(), STATS_EVERY_MS);
    setTimeout(() => this.pollOnline(), 300);
    app.pollSeeks = () => this.pollSeeks();
    app.pollOnline = () => this.pollOnline();
    app.answerChallenge = (id, yes) => this.answer(id, yes);
  }

  inLobby() {
    return !this.app.current && document.getElementById("meet");
  }

  pollSeeks() {
    if (!this.inLobby()) return;
    fetch("api/seeks").then((r) => (r.ok ? r.json() : null)).then((body) => {
      if (!body) return;
      this.app.seeks = body.seeks;
      renderSeeks(this.app);
    }).catch(() => {});
  }

  pollStats() {
    if (!this.inLobby()) return;
    fetch("api/stats").then((r) => (r.ok ? r.json() : null)).then((st) => {
      if (!st) return;
      this.app.stats = st;
      const el = document.getElementById("online-count");
      if (el) el.textContent = statsText(st);
    }).catch(() => {});
  }

  pollOnline() {
    if (!this.inLobby()) return;
    fetch("api/online").then((r) => (r.ok ? r.json() : null)).then((body) => {
      if (!body) return;
      this.app.online = body.players;
      renderOnline(this.app);
    }).catch(() => {});
  }

  answer(id, yes) {
    this.app.challengesIn.delete(id);
    renderChallenges(this.app);
    this.app.conn.request({ type: yes ? "accept_challenge" : "decline_challenge", challenge_id: id })
      .catch((e) => this.app.toast(errorText(e), "error"));
  }

  /** True if the message was one of meeting an opponent's. */
  onMessage(m) {
    const app = this.app;
    switch (m.type) {
      case "paired":
        if (m.seek_id) app.mySeeks.delete(m.seek_id);
        if (app.seekToast) { app.seekToast.remove(); app.seekToast = null; }
        if (m.challenge_id) { app.challengesOut.delete(m.challenge_id); app.challengesIn.delete(m.challenge_id); }
        app.openRoom(m.room_id);
        return true;
      case "challenge":
        app.challengesIn.set(m.challenge_id, m);
        renderChallenges(app);
        app.toast(t(app.current ? "meet.challengedElsewhere" : "meet.challenged", { name: m.from.name, game: gameTitle(m.game) }));
        return true;
      case "challenge_declined":
        app.toast(app.challengesOut.has(m.challenge_id)
          ? t("meet.declinedBy", { name: app.challengesOut.get(m.challenge_id) }) : t("meet.declined"));
        app.challengesOut.delete(m.challenge_id);
        renderChallenges(app);
        return true;
      case "challenge_canceled": {
        // Said, not just gone: unanswered in a minute, withdrawn, or its sender left.
        const out = app.challengesOut.get(m.challenge_id);
        const incoming = app.challengesIn.get(m.challenge_id);
        if (out && !app.cancelingChallenge?.has(m.challenge_id)) {
          app.toast(t("meet.challengeEnded", { name: out }));
        } else if (incoming) {
          app.toast(t("meet.challengeWithdrawn", { name: incoming.from.name }));
        }
        app.challengesIn.delete(m.challenge_id);
        app.challengesOut.delete(m.challenge_id);
        renderChallenges(app);
        return true;
      }
      case "seeking": case "seek_canceled": case "challenge_sent":
        return true;
      default:
        return false;
    }
  }
}
