// The lobby's tournaments (contract sections 13 and 19): those waiting and playing, from
// GET /api/tournaments every few seconds, with Join, Leave (an arena's while it plays too) and
// (for its creator) Start; and a form to create one (registered players).
import { h, clear } from "./dom.js";
import { GAMES, gameTitle } from "./notation.js";
import { PRESETS, clockLabel } from "./meet.js";
import { syncList, showEmpty } from "./keyed.js";
import { t, tWord, errorText } from "./i18n.js";

const EVERY_MS = 3000;
const LEVELS = ["random", "easy", "medium", "hard", "max"];

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
      // Finished ones stay in the list (after the others: the server's order), to be viewed.
      this.list = body.tournaments;
      this.renderList();
      this.learnEntries();
    }).catch(() => {});
  }

  /** Whether this player is in each waiting tournament, asked of the server once per
   * tournament (its standings list the entrants): another browser of the same player shows
   * Leave too, not only the one that joined. */
  learnEntries() {
    const me = this.app.me && this.app.me.player_id;
    if (!me) return;
    this.checked ??= new Set();
    for (const to of this.list.filter((x) => x.status === "waiting" && !this.checked.has(`${me}:${x.tournament_id}`))) {
      this.checked.add(`${me}:${to.tournament_id}`);
      fetch(`api/tournaments/${encodeURIComponent(to.tournament_id)}`).then((r) => (r.ok ? r.json() : null)).then((d) => {
        if (!d) return;
        const inIt = d.standings.some((x) => x.player_id === me);
        if (inIt === this.entered.has(to.tournament_id)) return;
        if (inIt) this.entered.add(to.tournament_id); else this.entered.delete(to.tournament_id);
        this.remember();
        this.renderList();
      }).catch(() => {});
    }
  }

  ask(msg, done) {
    this.app.conn.request(msg).then((m) => { if (done) done(m); this.poll(); },
      (e) => this.app.toast(errorText(e), "error"));
  }

  render() {
    const box = document.getElementById("tourneys");
    if (!box) return;
    clear(box);
    box.append(h("div", { class: "panel-head" }, h("h2", {}, t("tourney.title"))),
      h("div", { id: "tourney-list" }, h("p", { class: "muted" }, t("common.loading"))), this.form());
    this.renderList();
    this.poll();
  }

  renderList() {
    const box = document.getElementById("tourney-list");
    if (!box || !this.list) return;
    if (!this.list.length) {
      showEmpty(box, h("p", { class: "muted", id: "no-tourneys" }, t("tourney.none")));
      return;
    }
    const me = this.app.me && this.app.me.player_id;
    // Keyed: a row is rebuilt only when what it shows changed (a press survives the poll).
    syncList(box, this.list, (to) => to.tournament_id,
      (to) => JSON.stringify([to, this.entered.has(to.tournament_id), me === to.created_by]),
      (to) => this.row(to));
  }

  row(to) {
    const me = this.app.me;
    const actions = h("span", { class: "room-actions" });
    // An arena is joined and left while it plays too (contract section 19).
    if (to.status === "waiting" || (to.format === "arena" && to.status === "playing")) {
      const inIt = this.entered.has(to.tournament_id);
      const join = h("button", { class: `btn small ${inIt ? "" : "primary"}`, type: "button",
        "data-join-tourney": to.tournament_id }, inIt ? t("tourney.leave") : t("common.join"));
      join.addEventListener("click", () => {
        const type = inIt ? "leave_tournament" : "join_tournament";
        this.ask({ type, tournament_id: to.tournament_id }, () => {
          if (inIt) this.entered.delete(to.tournament_id); else this.entered.add(to.tournament_id);
          this.remember();
        });
      });
      actions.append(join);
      if (me && me.player_id === to.created_by) {
        const start = h("button", { class: "btn small", type: "button", "data-start-tourney": to.tournament_id }, t("tourney.start"));
        start.addEventListener("click", () => this.ask({ type: "start_tournament", tournament_id: to.tournament_id }));
        actions.append(start);
      }
    }
    actions.append(h("a", { class: "btn small", href: `tournaments/${encodeURIComponent(to.tournament_id)}` }, t("tourney.view")));
    const what = to.status === "waiting" ? t("tourney.entered", { count: to.players })
      : to.status === "finished" ? t("tourney.finishedPlayers", { count: to.players })
        : to.format === "arena"
          ? t("tourney.arenaLeft", { count: to.players, left: timeLeft(to.ends_at_ms - Date.now()) })
          : t("tourney.roundOf", { round: to.round, rounds: to.rounds });
    const name = to.format === "arena" ? t("tourney.arenaName", { minutes: to.minutes })
      : tWord("tourney.format", to.format);
    return h("div", { class: "tourney-row", "data-tourney": to.tournament_id },
      h("span", { class: "room-game" }, `${name} · ${gameTitle(to.game)}`),
      h("span", { class: "muted small" }, `${clockLabel(to.clock)} · ${to.rated ? t("meet.rated") : t("meet.casual")} · ${what}`),
      actions);
  }

  form() {
    const registered = !!(this.app.me && this.app.me.registered);
    if (!registered) {
      return h("p", { class: "small muted" }, t("tourney.registerFirst"));
    }
    const game = h("select", { id: "tourney-game" },
      Object.keys(GAMES).map((g) => h("option", { value: g }, gameTitle(g))));
    const format = h("select", { id: "tourney-format" },
      h("option", { value: "round_robin" }, t("tourney.format.round_robin")), h("option", { value: "swiss" }, t("tourney.format.swiss")),
      h("option", { value: "arena" }, t("tourney.format.arena")));
    const rounds = h("input", { type: "number", id: "tourney-rounds", min: 1, max: 30, value: 3 });
    const roundsLabel = h("label", { id: "tourney-rounds-label", hidden: true }, t("tourney.roundsLabel"), " ", rounds);
    const minutes = h("input", { type: "number", id: "tourney-minutes", min: 10, max: 180, value: 30 });
    const minutesLabel = h("label", { id: "tourney-minutes-label", hidden: true }, t("tourney.minutesLabel"), " ", minutes);
    // A round robin's rounds are its entrants': only a Swiss asks how many; an arena, how long.
    format.addEventListener("change", () => {
      roundsLabel.hidden = format.value !== "swiss";
      minutesLabel.hidden = format.value !== "arena";
    });
    const clock = h("select", { id: "tourney-clock" },
      PRESETS.map(([label, base, inc]) => h("option", { value: `${base * 1000}:${inc * 1000}` }, t("lobby.clockMin", { clock: label }))));
    clock.value = "300000:0";
    const twice = h("input", { type: "checkbox", id: "tourney-twice" });
    const rated = h("input", { type: "checkbox", id: "tourney-rated" });
    const bots = LEVELS.map((lv) => h("input", { type: "checkbox", value: lv, id: `tourney-bot-${lv}` }));
    const form = h("form", { class: "tourney-form", id: "tourney-form", "aria-label": t("tourney.newLabel") },
      h("div", { class: "row" }, h("label", {}, t("common.game"), " ", game), h("label", {}, t("tourney.formatLabel"), " ", format),
        roundsLabel, minutesLabel, h("label", {}, t("lobby.clock"), " ", clock)),
      h("div", { class: "row" }, h("label", {}, twice, " ", t("tourney.twice")), h("label", {}, rated, " ", t("lobby.rated"))),
      h("fieldset", {}, h("legend", { class: "small" }, t("tourney.houseBots")),
        h("div", { class: "row" }, bots.map((b) => h("label", { for: b.id }, b, ` ${tWord("level", b.value)}`)))),
      h("button", { class: "btn", type: "submit", id: "tourney-create" }, t("tourney.create")));
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
      this.ask(msg, () => this.app.toast(t("tourney.created")));
    });
    return form;
  }

  /** True if the message was a tournament's. */
  onMessage(m) {
    if (m.type === "tournament_game") {
      // The room says it is a tournament's (a link to it in its title), not a toast over it.
      (this.app.tournamentGames ??= new Map()).set(m.room_id, { tournament_id: m.tournament_id, round: m.round });
      if (this.app.current && this.app.current.id === m.room_id) return true;  // there already
      this.app.openRoom(m.room_id);
      this.app.subscribe();  // the server seated us, but we follow the room by joining it
      return true;
    }
    return ["tournament_created", "tournament_joined", "tournament_left", "tournament_started"].includes(m.type);
  }
}
