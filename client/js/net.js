// The WebSocket connection: hello with the stored token, answers matched by `re`, and a
// reconnect with exponential backoff (plus jitter) whenever the socket drops.

import { t } from "./i18n.js";

const TOKEN_KEY = "tablas-token";

export class Connection {
  constructor({ url, name, onMessage, onStatus, onWelcome }) {
    this.url = url;
    this.name = name;
    this.onMessage = onMessage;
    this.onStatus = onStatus;
    this.onWelcome = onWelcome;
    this.ws = null;
    this.n = 0;
    this.pending = new Map();  // id -> {resolve, reject}
    this.attempt = 0;
    this.timer = null;
    this.ready = false;
    this.status = "idle";
    this.retryAt = 0;
  }

  start() {
    this._open();
  }

  /** Logs into a registered player (any device): a new socket whose hello carries the name
   * and password instead of the stored token. Settles with the welcome, or the refusal (and
   * the page goes on as the player it was). The password is kept only until the answer. */
  login(name, password) {
    return new Promise((resolve, reject) => {
      this.loginAttempt = { name, password, resolve, reject };
      // Not restart(name): the guest's own name stays this.name until a welcome says
      // otherwise, so a refused login comes back as the same guest, by the same name.
      this.restart();
    });
  }

  /** Closes the socket and opens a new one (e.g. after a name change). */
  restart(name) {
    if (name) this.name = name;
    this.attempt = 0;
    if (this.ws) {
      const old = this.ws;
      this.ws = null;
      old.onclose = null;
      old.close();
    }
    this._rejectAll("reconnecting");
    this._open();
  }

  _setStatus(st) {
    this.status = st;
    if (this.onStatus) this.onStatus(st, this);
  }

  _open() {
    clearTimeout(this.timer);
    this.ready = false;
    this._setStatus("connecting");
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (e) {
      this._scheduleRetry();
      return;
    }
    this.ws = ws;
    ws.onopen = () => this._hello(localStorage.getItem(TOKEN_KEY));
    ws.onmessage = (ev) => {
      let m;
      try { m = JSON.parse(ev.data); } catch { return; }
      this._receive(m);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.ready = false;
      this._rejectAll("connection lost");
      this._scheduleRetry();
    };
    ws.onerror = () => { /* onclose follows */ };
  }

  _hello(token) {
    const login = this.loginAttempt;
    if (login) {
      this._raw({ type: "hello", name: login.name, password: login.password, id: "hello" });
      return;
    }
    this._raw({ type: "hello", name: this.name, token: token || null, id: "hello" });
  }

  _scheduleRetry() {
    const base = Math.min(8000, 300 * 2 ** this.attempt);
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.attempt += 1;
    this.retryAt = Date.now() + delay;
    this._setStatus("offline");
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this._open(), delay);
  }

  /** Try again now (the "reconnect" link). */
  retryNow() {
    if (!this.ws) this._open();
  }

  _receive(m) {
    if (m.type === "welcome") {
      localStorage.setItem(TOKEN_KEY, m.token);
      this.name = m.name;
      if (this.loginAttempt) { this.loginAttempt.resolve(m); this.loginAttempt = null; }
      this.attempt = 0;
      this.ready = true;
      this._setStatus("online");
      if (this.onWelcome) this.onWelcome(m);
      return;
    }
    if (m.type === "error" && m.re === "hello") {
      if (this.loginAttempt) {  // refused: go on as the player this page was
        this.loginAttempt.reject(m);
        this.loginAttempt = null;
        this._hello(localStorage.getItem(TOKEN_KEY));
        return;
      }
      if (m.code === "name_taken") {
        // The name is a registered player's: go on under another until one logs in.
        this.name = t("app.guestName", { n: String(Math.floor(1000 + Math.random() * 9000)) });
        this._hello(localStorage.getItem(TOKEN_KEY));
        return;
      }
      if (m.code === "not_authenticated") {
        // A token this server does not know (a fresh database): start as a new player.
        localStorage.removeItem(TOKEN_KEY);
        this._hello(null);
        return;
      }
      if (m.code === "bad_request" && /name/i.test(m.message || "")) {
        this.name = t("app.guest");
        this._hello(localStorage.getItem(TOKEN_KEY));
        return;
      }
    }
    if (m.re !== undefined && this.pending.has(m.re)) {
      const p = this.pending.get(m.re);
      this.pending.delete(m.re);
      if (m.type === "error") p.reject(m); else p.resolve(m);
    }
    if (this.onMessage) this.onMessage(m);
  }

  _raw(msg) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  _rejectAll(why) {
    for (const p of this.pending.values()) p.reject({ type: "error", code: "offline", message: why });
    this.pending.clear();
  }

  /** Sends a message; the promise settles with the server's answer (`re`) or its error. */
  request(msg) {
    const id = ++this.n;
    return new Promise((resolve, reject) => {
      if (!this.ready || !this._raw({ ...msg, id })) {
        reject({ type: "error", code: "offline", message: "not connected to the server" });
        return;
      }
      this.pending.set(id, { resolve, reject });
    });
  }

  /** Fire and forget (the answer, if any, still reaches onMessage). */
  send(msg) {
    if (!this.ready) return false;
    return this._raw({ ...msg, id: ++this.n });
  }
}

let gamesInfo = null;

/** The server's games and bot levels (`GET /api/games`), asked for once per page. */
export function serverGames() {
  gamesInfo ??= fetch("api/games").then((r) => {
    if (!r.ok) throw new Error(`api/games answered ${r.status}`);
    return r.json();
  });
  return gamesInfo;
}
