// Tablas web client: routing (#/, #/room/<id>, #/watch/<id>), the connection, and the state
// of the room on screen.
import { h, clear } from "./dom.js";
import { randomSeatSeed } from "./dice.js";
import { Connection } from "./net.js";
import { renderLobby, renderRooms, renderRecent, renderAccount } from "./lobby.js";
import { Meeting, renderMeet } from "./meet.js";
import { Tourneys } from "./tourneys.js";
import { mountRoom, renderRoom, appendChat, boardKey, tickClocks, canMove } from "./room.js";
import { play, setupSoundToggle } from "./sound.js";
import { t, errorText, onLanguageChange } from "./i18n.js";

const NAME_KEY = "tablas-name";
const MYROOMS_KEY = "tablas-my-rooms";

function defaultName() {
  return t("app.defaultName", { n: String(Math.floor(1000 + Math.random() * 9000)) });
}

class App {
  constructor() {
    this.main = document.getElementById("main");
    this.rooms = null;
    this.recent = null;      // the games that ended last (the lobby's "recent"), for reviews
    this.room = null;        // the snapshot on screen, kept current by updates
    this.prevState = null;   // the state before the latest update (for animations)
    this.analysis = null;
    this.current = null;     // {id, mode: "join"|"watch"}
    this.sentPly = null;     // the ply a move was sent for (no double sends)
    this.ui = {};            // per-room UI state kept across renders (selection, play builder)
    this.me = null;
    this.rematchOffers = new Map();  // finished room id -> the server's rematch_offer for it
    this.myRooms = new Set(JSON.parse(localStorage.getItem(MYROOMS_KEY) || "[]"));
    let name = localStorage.getItem(NAME_KEY);
    if (!name) { name = defaultName(); localStorage.setItem(NAME_KEY, name); }
    const proto = location.protocol === "https:" ? "wss" : "ws";
    this.conn = new Connection({
      url: `${proto}://${location.host}/ws`,
      name,
      onMessage: (m) => this.onMessage(m),
      onStatus: (st, c) => this.onStatus(st, c),
      onWelcome: (m) => this.onWelcome(m),
    });
    this.setupHeader(name);
    this.meeting = new Meeting(this);
    this.tourneys = new Tourneys(this);
    window.addEventListener("hashchange", () => this.route());
    document.addEventListener("keydown", (ev) => this.onKey(ev));
    setInterval(() => this.poll(), 3000);
    setInterval(() => tickClocks(this.room), 250);
    setInterval(() => this.refreshStatus(), 1000);
    this.route();
    this.conn.start();
    onLanguageChange(() => this.redraw());
  }

  /** Every text drawn again in the language just chosen: the lobby, or the room. */
  redraw() {
    this.refreshStatus();
    setupSoundToggle(document.getElementById("sound"), true);
    if (this.current && document.getElementById("room-view")) {
      mountRoom(this, this.main, this.current.id);
      if (this.room) renderRoom(this, false);
      return;
    }
    if (!this.current) renderLobby(this, this.main);
  }

  // --- header, status, toasts ---------------------------------------------------------------

  setupHeader(name) {
    const input = document.getElementById("name-input");
    input.value = name;
    document.getElementById("name-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      // Code points, not UTF-16 units: a cut must not split a surrogate pair. The server
      // has the last word (NFKC, at most 24 characters) and its welcome shows the result.
      const v = Array.from(input.value.trim()).slice(0, 24).join("");
      if (!v) { input.value = this.conn.name; return; }
      localStorage.setItem(NAME_KEY, v);
      input.blur();
      if (v !== this.conn.name) this.conn.restart(v);
    });
    document.getElementById("conn").addEventListener("click", () => this.conn.retryNow());
    setupSoundToggle(document.getElementById("sound"));
  }

  onStatus(st) {
    this.refreshStatus();
    if (st === "offline" && this.room) {
      document.body.classList.add("offline");
    } else if (st === "online") {
      document.body.classList.remove("offline");
    }
  }

  refreshStatus() {
    const el = document.getElementById("conn");
    const c = this.conn;
    el.dataset.status = c.status;
    el.title = t("header.connTitle");
    if (c.status === "online") el.textContent = t("header.online");
    else if (c.status === "connecting") el.textContent = t("header.connecting");
    else if (c.status === "offline") {
      const secs = Math.max(0, Math.ceil((c.retryAt - Date.now()) / 1000));
      el.textContent = secs ? t("header.offlineRetry", { count: secs }) : t("header.reconnecting");
    }
  }

  toast(text, kind = "") {
    const box = document.getElementById("toasts");
    const t = h("div", { class: `toast ${kind}`, role: "alert" }, text);
    box.append(t);
    setTimeout(() => t.classList.add("gone"), 3500);
    setTimeout(() => t.remove(), 4200);
    return t;
  }

  // --- routing --------------------------------------------------------------------------------

  route() {
    const hash = location.hash || "#/";
    const m = /^#\/(room|watch)\/([0-9A-Za-z_-]{1,64})$/.exec(hash);
    if (m) {
      const id = m[2], mode = m[1] === "watch" ? "watch" : "join";
      document.body.classList.remove("in-lobby");
      if (this.current && this.current.id === id && document.getElementById("room-view")) return;
      this.leaveCurrent();
      this.current = { id, mode };
      this.room = null;
      this.analysis = null;
      this.prevState = null;
      mountRoom(this, this.main, id);
      this.subscribe();
      return;
    }
    this.leaveCurrent();
    this.current = null;
    this.room = null;
    document.title = t("app.title");
    // The lobby's account panel holds the one name box there: the header's steps aside.
    document.body.classList.add("in-lobby");
    renderLobby(this, this.main);
    this.poll();
  }

  leaveCurrent() {
    const cur = this.current, room = this.room;
    if (!cur) return;
    // Stop receiving the room's messages; a seat in a waiting room stays ours (leave would
    // free it), so then we just stay subscribed.
    const seated = room && (room.your_seats || []).length;
    if (room && !(seated && room.status === "waiting")) {
      this.conn.send({ type: "leave", room_id: cur.id });
    }
  }

  subscribe() {
    const cur = this.current;
    if (!cur || !this.conn.ready) return;
    const id = cur.id;
    const spectate = () => this.conn.request({ type: "spectate", room_id: id }).catch((e) => this.roomError(id, e));
    if (cur.mode === "watch") { spectate(); return; }
    // A random dice seed of this page's own for the room (docs/dice.md), kept so that a
    // rejoin sends the same one; the server ignores it in a game without dice.
    const key = `tablas-seed-${id}`;
    const seed = sessionStorage.getItem(key) || randomSeatSeed();
    sessionStorage.setItem(key, seed);
    this.conn.request({ type: "join", room_id: id, seed }).catch((e) => {
      if (this.current && this.current.id === id && e.code !== "unknown_room" && e.code !== "offline") {
        cur.mode = "watch";
        spectate();
      } else {
        this.roomError(id, e);
      }
    });
  }

  roomError(id, e) {
    if (!this.current || this.current.id !== id || e.code === "offline") return;
    const holder = document.getElementById("board-holder");
    if (holder && !this.room) {
      clear(holder);
      holder.append(h("div", { class: "panel notice" },
        h("p", {}, e.code === "unknown_room" ? t("room.noSuchRoom") : errorText(e)),
        h("a", { class: "btn primary", href: "#/" }, t("room.backToLobby"))));
    }
  }

  poll() {
    // The lobby's list; in a room, the same list keeps the spectator count fresh.
    if (this.conn.ready && (!this.current || this.room)) {
      this.conn.request({ type: "list_rooms" }).catch(() => {});
    }
  }

  // --- messages -------------------------------------------------------------------------------

  onWelcome(m) {
    this.me = { player_id: m.player_id, name: m.name, registered: !!m.registered };
    document.body.classList.toggle("registered", this.me.registered);
    document.getElementById("name-input").value = m.name;
    localStorage.setItem(NAME_KEY, m.name);
    renderAccount(this);
    renderMeet(this);  // rated seeks and challenges are for registered players
    this.tourneys.render();
    for (const s of m.seats || []) this.rememberRoom(s.room_id);
    // Adjourned games are not in the lobby: the player finds them here, and opening one
    // (a join) resumes it.
    this.adjourned = (m.seats || []).filter((s) => s.status === "adjourned").map((s) => s.room_id);
    this.sentPly = null;
    this.subscribe();
    this.poll();
  }

  rememberRoom(id) {
    if (this.myRooms.has(id)) return;
    this.myRooms.add(id);
    const list = [...this.myRooms].slice(-50);
    this.myRooms = new Set(list);
    localStorage.setItem(MYROOMS_KEY, JSON.stringify(list));
  }

  /** A room this page now plays in (a room it created, or one a seek or challenge seated it
   * in): shown at once, its snapshot follows. */
  openRoom(id) {
    this.leaveCurrent();
    this.current = { id, mode: "join" };
    this.room = null;
    this.analysis = null;
    this.rememberRoom(id);
    mountRoom(this, this.main, id);
    location.hash = `#/room/${id}`;
  }

  onMessage(m) {
    if (this.meeting.onMessage(m) || this.tourneys.onMessage(m)) return;
    switch (m.type) {
      case "rooms":
        this.rooms = m.rooms;
        this.recent = m.recent || [];
        renderRooms(this, m.rooms);
        renderRecent(this, this.recent);
        if (this.room) {
          const mine = m.rooms.find((r) => r.room_id === this.room.room_id);
          if (mine && mine.spectators !== this.room.spectators) {
            this.room.spectators = mine.spectators;
            const el = document.getElementById("room-spectators");
            if (el) el.textContent = t("room.watching", { count: mine.spectators });
          }
        }
        break;
      case "room_created":
        this.openRoom(m.room_id);
        break;
      case "room":
        if (!this.current || m.room_id !== this.current.id) break;
        this.onSnapshot(m);
        break;
      case "update":
        if (!this.room || m.room_id !== this.room.room_id) break;
        this.onUpdate(m);
        break;
      case "chat":
        if (this.current && m.room_id === this.current.id) appendChat(this, m);
        break;
      case "resign_offer":
        // A backgammon resignation offered (contract section 8): shown until it is answered.
        if (this.room && m.room_id === this.room.room_id) {
          this.room.resign_offer = { seat: m.seat, points: m.points };
          renderRoom(this, false);
        }
        break;
      case "resign_declined":
        if (this.room && m.room_id === this.room.room_id) {
          const o = this.room.resign_offer;
          this.room.resign_offer = null;
          // Said in the room until the next move, not only in a passing toast.
          this.room.resign_declined = o ? o.seat : -1;
          const mine = this.room.your_seats || [];
          if (o && mine.includes(o.seat) && !mine.includes(1 - o.seat)) this.toast(t("toast.yourResignDeclined"));
          else this.toast(t("toast.resignDeclined"));
          renderRoom(this, false);
        }
        break;
      case "draw_offer": case "takeback_offer": case "draw_declined": case "takeback_declined":
        if (this.room && m.room_id === this.room.room_id) this.onOfferNews(m);
        break;
      case "rematch_offer":
        // Only the server says where a rematch is; the room view shows it from here.
        this.rematchOffers.set(m.room_id, m);
        if (this.room && m.room_id === this.room.room_id) renderRoom(this, false);
        break;
      case "analysis":
        if (this.current && m.room_id === this.current.id) {
          if (!this.analysis || m.ply > this.analysis.ply || (m.ply === this.analysis.ply &&
              (m.final || !this.analysis.final || m.depth >= this.analysis.depth))) {
            this.analysis = m;
            if (this.room) renderRoom(this, false);
          }
        }
        break;
      case "error":
        if (m.re === undefined || m.code === "rate_limited" || m.code === "internal") {
          this.toast(errorText(m), "error");
        }
        break;
      default:
        break;
    }
  }

  onSnapshot(m) {
    const old = this.room;
    const fresh = old && old.room_id === m.room_id && m.ply === old.ply + 1;
    this.prevState = fresh ? old.state : null;
    this.room = { ...m, rolls: m.rolls || [], clockAt: Date.now() };
    if ((m.your_seats || []).length) {
      this.rememberRoom(m.room_id);
      this.current.mode = "join";
    }
    if (m.status !== "adjourned" && this.adjourned) this.adjourned = this.adjourned.filter((id) => id !== m.room_id);
    if (this.sentPly !== null && m.ply !== this.sentPly) this.sentPly = null;
    if (old && old.ply !== m.ply && this.ui[m.room_id]) this.ui[m.room_id] = {};
    renderRoom(this, !!fresh);
  }

  /** A draw offer or a takeback asked for, or declined (contract section 7). */
  onOfferNews(m) {
    const kind = m.type.startsWith("draw") ? "draw" : "takeback";
    const mine = this.room.your_seats || [];
    if (m.type.endsWith("_offer")) {
      this.room[`${kind}_offer`] = m.seat;
      // The room's panel shows it with Accept and Decline: a sound, no toast over the board.
      if (mine.includes(1 - m.seat) && !mine.includes(m.seat)) play("turn");
    } else {
      this.room[`${kind}_offer`] = null;
      if (mine.includes(m.seat) && !mine.includes(1 - m.seat)) {
        this.toast(kind === "draw" ? t("toast.drawDeclined") : t("toast.takebackDeclined"));
      }
    }
    renderRoom(this, false);
  }

  /** A takeback accepted: the position as it was `m.takeback` actions ago. */
  onTakeback(m) {
    const room = this.room;
    if (m.ply !== room.ply - m.takeback) { this.subscribe(); return; }  // not what we had
    this.prevState = null;
    this.room = { ...room, ply: m.ply, state: m.state, to_move: m.to_move,
      legal_moves: m.legal_moves || [], status: m.status, result: m.result,
      history: room.history.slice(0, m.ply), draw_offer: null, takeback_offer: null,
      clocks: m.clocks, clock_running: m.clock_running, away_since_ms: m.away_since_ms,
      abortable: m.abortable, clockAt: Date.now() };
    this.sentPly = null;
    this.ui[m.room_id] = {};
    renderRoom(this, false);
    this.toast(t("toast.takenBack", { count: m.takeback }));
  }

  onUpdate(m) {
    const room = this.room;
    if (m.takeback) { this.onTakeback(m); return; }
    if (m.ply <= room.ply) return;  // already seen (a snapshot raced it)
    if (m.ply !== room.ply + 1) {   // a gap: fetch a fresh snapshot
      this.subscribe();
      return;
    }
    this.prevState = room.state;
    const next = { ...room, ply: m.ply, state: m.state, to_move: m.to_move,
      legal_moves: m.legal_moves || [], status: m.status, result: m.result,
      history: [...room.history, m.move], resign_offer: null, resign_declined: null, takeback_offer: null,
      // The other side's move answers a draw offer; the offerer's own keeps it.
      draw_offer: room.draw_offer === m.seat ? room.draw_offer : null };
    if (m.dice) next.rolls = [...(room.rolls || []), { ply: m.ply, dice: m.dice }];
    for (const k of ["clocks", "clock_running", "away_since_ms", "abortable"]) if (k in m) next[k] = m[k];
    if ("clocks" in m) next.clockAt = Date.now();
    this.room = next;
    this.sentPly = null;
    this.ui[m.room_id] = {};
    renderRoom(this, true);
    play(m.dice ? "roll" : canMove(this, next) ? "turn" : "move");
  }

  onKey(ev) {
    const t = ev.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) return;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (this.room && boardKey(this, ev)) ev.preventDefault();
  }

  // --- actions --------------------------------------------------------------------------------

  /** `register`: `name` (the one typed in the account form) becomes this player's, with
   * `password`; the player goes by it from now on. Refused, nothing changes. */
  register(name, password) {
    const msg = { type: "register", password };
    if (name !== (this.me && this.me.name)) msg.name = name;
    return this.conn.request(msg).then((m) => {
      this.me = { ...this.me, name: m.name, registered: true };
      document.body.classList.add("registered");
      this.conn.name = m.name;
      document.getElementById("name-input").value = m.name;
      localStorage.setItem(NAME_KEY, m.name);
      renderAccount(this);
      // Rated play, challenges and tournaments are a registered player's: show them now.
      renderMeet(this);
      this.tourneys.render();
      this.toast(t("toast.registered", { name: m.name }));
    });
  }

  /** `hello` with a name and password: this page becomes that registered player. */
  login(name, password) {
    return this.conn.login(name, password).then(() => this.toast(t("toast.loggedIn", { name: this.me.name })));
  }

  /** A guest plays on under another name (the header's Save does the same). */
  rename(name) {
    const v = Array.from(name.trim()).slice(0, 24).join("");
    if (!v || v === this.conn.name) return;
    localStorage.setItem(NAME_KEY, v);
    this.conn.restart(v);
  }

  createRoom(msg) {
    this.conn.request({ type: "create_room", ...msg }).catch((e) => this.toast(errorText(e), "error"));
  }

  takeSeat(seat, seed = "") {
    if (!this.room) return;
    this.current.mode = "join";
    const msg = { type: "join", room_id: this.room.room_id, seat };
    if (seed) msg.seed = seed;  // the seat's dice seed (docs/dice.md)
    this.conn.request(msg)
      .catch((e) => this.toast(errorText(e), "error"));
  }

  sendMove(move) {
    const room = this.room;
    if (!room || this.sentPly === room.ply) return;
    this.sentPly = room.ply;
    renderRoom(this, false);
    this.conn.request({ type: "move", room_id: room.room_id, ply: room.ply, move }).catch((e) => {
      if (this.room && this.room.ply === room.ply) this.sentPly = null;
      if (e.code !== "stale") this.toast(errorText(e), "error");
      if (e.code === "offline") return;
      this.subscribe();  // refresh the snapshot after a refusal
    });
  }

  resign() {
    if (!this.room) return;
    this.conn.request({ type: "resign", room_id: this.room.room_id }).catch((e) => this.toast(errorText(e), "error"));
  }

  // Backgammon: offer to give up the current game for points (1, 2 or 3) times the cube.
  offerResign(points) {
    if (!this.room) return;
    this.conn.request({ type: "resign", room_id: this.room.room_id, points }).catch((e) => this.toast(errorText(e), "error"));
  }

  acceptResign() {
    if (!this.room) return;
    this.conn.request({ type: "accept_resign", room_id: this.room.room_id }).catch((e) => this.toast(errorText(e), "error"));
  }

  declineResign() {
    if (!this.room) return;
    this.conn.request({ type: "decline_resign", room_id: this.room.room_id }).catch((e) => this.toast(errorText(e), "error"));
  }

  // A draw offer or a takeback, and their answers (contract section 7).
  offer(type) {
    if (!this.room) return;
    this.conn.request({ type, room_id: this.room.room_id }).catch((e) => this.toast(errorText(e), "error"));
  }

  // Ends the game without a result while a side has yet to make its first move.
  abort() {
    if (!this.room) return;
    this.conn.request({ type: "abort", room_id: this.room.room_id }).catch((e) => this.toast(errorText(e), "error"));
  }

  // Wins the game of an opponent who left; the server says how long to wait if it is early.
  claimWin() {
    if (!this.room) return;
    this.conn.request({ type: "claim_win", room_id: this.room.room_id }).catch((e) => this.toast(errorText(e), "error"));
  }

  rematch() {
    const room = this.room;
    if (!room) return;
    // The server tells the room's other followers (rematch_offer); the answer opens it here.
    this.conn.request({ type: "rematch", room_id: room.room_id })
      .catch((e) => this.toast(errorText(e), "error"));
  }

  leaveSeat() {
    const room = this.room;
    if (!room) return;
    this.conn.request({ type: "leave", room_id: room.room_id })
      .then(() => {
        // Already unsubscribed: the route change must not leave a second time.
        if (this.current && this.current.id === room.room_id) this.current = null;
        location.hash = "#/";
      })
      .catch((e) => this.toast(errorText(e), "error"));
  }

  handToBot(seat) {
    if (!this.room) return;
    this.conn.request({ type: "hand_to_bot", room_id: this.room.room_id, seat, level: "medium" })
      .catch((e) => this.toast(errorText(e), "error"));
  }

  chat(text) {
    if (!this.current) return;
    this.conn.request({ type: "chat", room_id: this.current.id, text }).catch((e) => this.toast(errorText(e), "error"));
  }
}

window.tablas = new App();
