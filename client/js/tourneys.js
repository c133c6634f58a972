// The lobby's tournaments (contract sections 13 and 19): those waiting and playing, from
// GET /api/tournaments every few seconds, with Join, Leave (an arena's while it plays too) and
// (for its creator) Start; and a form to create one (registered players).
import { h, clear } from "./dom.js";
import { GAMES, gameTitle } from "./notation.js";
import { PRESETS, clockLabel } from "./meet.js";

const EVERY_MS = 3000;
const LEVELS = ["random", "easy", "medium", "hard", "max"];
export const FORMAT_NAMES = { round_robin: "Round robin", swiss: "Swiss", arena: "Arena" };

/** "12:34" from milliseconds (never below 0). */
export function timeLeft(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

export class Tourneys {
  constructor(app) {
    this.app = app;
    this.list = null;
    this.entered = new Set(JSON.parse(localStorage.getItem("tablas-entered") || "[]"));
    setInterval(() => this.poll(), EVERY_MS);
  }

  remember() {
    localStorage.setItem("tablas-entered", JSON.stringify([...this.entered].slice(-50)));
  }

  poll() {
    if (this.app.current || !document.getElementById("tourneys")) return;
    fetch("api/tournaments").then((r) => (r.ok ? r.json() : null)).then((body) => {
      if (!body) return;
      this.list = body.tournaments.filter((t) => t.status !== "finished");
      this.renderList();
    }).catch(() => {});
  }

  ask(msg, done) {
    this.app.conn.request(msg).then((m) => { if (done) done(m); this.poll(); },
      (e) => this.app.toast(e.message || e.code, "error"));
  }

  render() {
    const box = document.getElementById("tourneys");
    if (!box) return;
    clear(box);
    box.append(h("div", { class: "panel-head" }, h("h2", {}, "Tournaments")),
      h("div", { id: "tourney-list" }, h("p", { class: "muted" }, "Loading…")), this.form());
    this.renderList();
    this.poll();
  }

  renderList() {
    const box = document.getElementById("tourney-list");
    if (!box || !this.list) return;
    clear(box);
    if (!this.list.length) {
      box.append(h("p", { class: "muted", id: "no-tourneys" }, "No tournament is waiting or playing."));
      return;
    }
    const me = this.app.me;
    for (const t of this.list) {
      const actions = h("span", { class: "room-actions" });
      if (t.status === "waiting" || t.format === "arena") {
        const inIt = this.entered.has(t.tournament_id);
        const join = h("button", { class: `btn small ${inIt ? "" : "primary"}`, type: "button",
          "data-join-tourney": t.tournament_id }, inIt ? "Leave" : "Join");
        join.addEventListener("click", () => {
          const type = inIt ? "leave_tournament" : "join_tournament";
          this.ask({ type, tournament_id: t.tournament_id }, () => {
            if (inIt) this.entered.delete(t.tournament_id); else this.entered.add(t.tournament_id);
            this.remember();
          });
        });
        actions.append(join);
        if (me && me.player_id === t.created_by) {
          const start = h("button", { class: "btn small", type: "button", "data-start-tourney": t.tournament_id }, "Start");
          start.addEventListener("click", () => this.ask({ type: "start_tournament", tournament_id: t.tournament_id }));
          actions.append(start);
        }
      }
      actions.append(h("a", { class: "btn small", href: `tournaments/${encodeURIComponent(t.tournament_id)}` }, "View"));
      const what = t.status === "waiting" ? `${t.players} entered`
        : t.format === "arena" ? `${t.players} in · ${timeLeft(t.ends_at_ms - Date.now())} left`
          : `round ${t.round} of ${t.rounds}`;
      const name = t.format === "arena" ? `Arena ${t.minutes} min` : FORMAT_NAMES[t.format] || t.format;
      box.append(h("div", { class: "tourney-row", "data-tourney": t.tournament_id },
        h("span", { class: "room-game" }, `${name} · ${gameTitle(t.game)}`),
        h("span", { class: "muted small" }, `${clockLabel(t.clock)} · ${t.rated ? "rated" : "casual"} · ${what}`),
        actions));
    }
  }

  form() {
    const registered = !!(this.app.me && this.app.me.registered);
    if (!registered) {
      return h("p", { class: "small muted" }, "Registered players create tournaments: register above.");
    }
    const game = h("select", { id: "tourney-game" },
      Object.keys(GAMES).map((g) => h("option", { value: g }, gameTitle(g))));
    const format = h("select", { id: "tourney-format" },
      h("option", { value: "round_robin" }, "Round robin"), h("option", { value: "swiss" }, "Swiss"),
      h("option", { value: "arena" }, "Arena"));
    const rounds = h("input", { type: "number", id: "tourney-rounds", min: 1, max: 30, value: 3 });
    const minutes = h("input", { type: "number", id: "tourney-minutes", min: 10, max: 180, value: 30 });
    const clock = h("select", { id: "tourney-clock" },
      PRESETS.map(([label, base, inc]) => h("option", { value: `${base * 1000}:${inc * 1000}` }, `${label} min`)));
    clock.value = "300000:0";
    const twice = h("input", { type: "checkbox", id: "tourney-twice" });
    const rated = h("input", { type: "checkbox", id: "tourney-rated" });
    const bots = LEVELS.map((lv) => h("input", { type: "checkbox", value: lv, id: `tourney-bot-${lv}` }));
    const form = h("form", { class: "tourney-form", id: "tourney-form", "aria-label": "new tournament" },
      h("div", { class: "row" }, h("label", {}, "Game ", game), h("label", {}, "Format ", format),
        h("label", {}, "Rounds (Swiss) ", rounds), h("label", {}, "Minutes (arena) ", minutes),
        h("label", {}, "Clock ", clock)),
      h("div", { class: "row" }, h("label", {}, twice, " Each pair plays twice"), h("label", {}, rated, " Rated")),
      h("fieldset", {}, h("legend", { class: "small" }, "House bots entered"),
        h("div", { class: "row" }, bots.map((b) => h("label", { for: b.id }, b, ` ${b.value}`)))),
      h("button", { class: "btn", type: "submit", id: "tourney-create" }, "Create tournament"));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const [base, inc] = clock.value.split(":").map(Number);
      const msg = { type: "create_tournament", game: game.value, format: format.value,
        clock: { base_ms: base, increment_ms: inc }, games_per_pairing: twice.checked ? 2 : 1,
        rated: rated.checked, house_bots: bots.filter((b) => b.checked).map((b) => b.value) };
      if (format.value === "swiss") msg.rounds = Number(rounds.value) || 3;
      if (format.value === "arena") {
        msg.minutes = Number(minutes.value) || 30;
        msg.games_per_pairing = 1;
      }
      this.ask(msg, (m) => this.app.toast(`Tournament created: join it, then start it when everyone is in.`));
    });
    return form;
  }

  /** True if the message was a tournament's. */
  onMessage(m) {
    if (m.type === "tournament_game") {
      if (this.app.current && this.app.current.id === m.room_id) return true;  // there already
      this.app.toast(`Round ${m.round} of your tournament: to your game!`);
      this.app.openRoom(m.room_id);
      this.app.subscribe();  // the server seated us, but we follow the room by joining it
      return true;
    }
    return ["tournament_created", "tournament_joined", "tournament_left", "tournament_started"].includes(m.type);
  }
}
