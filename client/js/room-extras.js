// The room's parts a lichess player looks for first (contract sections 7 and 8): draw offers
// and takebacks (the buttons, and the offer waiting for an answer), the rating change at a
// game's end, what kind of game it is (rated or casual, its clock), and the two chats marked.
import { h, clear } from "./dom.js";
import { pieceName, seatName as shownName } from "./notation.js";
import { t, fmtNumber } from "./i18n.js";

// The games whose draws and takebacks are offered (backgammon's resignations have a value).
const NO_OFFERS = new Set(["backgammon"]);

function seatName(room, seat) {
  return shownName(room.seats[seat]) || pieceName(room.game, seat);
}

/** "Offer draw" and "Takeback" for a seated player of a game being played. */
export function offerButtons(app, room) {
  const mine = room.your_seats || [];
  if (!mine.length || room.status !== "playing" || NO_OFFERS.has(room.game)) return [];
  const out = [];
  const waiting = room.draw_offer != null && mine.includes(room.draw_offer);
  out.push(h("button", { class: "btn", id: "draw-btn", type: "button", disabled: waiting,
    title: waiting ? t("offer.drawWaitsTitle") : t("offer.drawTitle"),
    on: { click: () => app.offer("offer_draw") } }, waiting ? t("offer.drawOffered") : t("offer.draw")));
  if (!room.rated) {
    const moved = historySeatsOf(room).some((s) => mine.includes(s));
    const asked = room.takeback_offer != null && mine.includes(room.takeback_offer);
    out.push(h("button", { class: "btn", id: "takeback-btn", type: "button", disabled: !moved || asked,
      title: moved ? t("offer.takebackTitle") : t("offer.nothingToTakeBack"),
      on: { click: () => app.offer("takeback") } }, asked ? t("offer.takebackAsked") : t("offer.takeback")));
  }
  return out;
}

// The seat of each move: these games alternate from seat 0.
function historySeatsOf(room) {
  return room.history.map((_, i) => i % 2);
}

/** A draw offer or a takeback waiting for its answer: the side facing it answers. */
export function renderPlayOffer(app, room) {
  const el = document.getElementById("play-offer");
  if (!el) return;
  clear(el);
  const offers = [];
  if (room.status === "playing") {
    if (room.draw_offer != null) offers.push(["draw", room.draw_offer]);
    if (room.takeback_offer != null) offers.push(["takeback", room.takeback_offer]);
  }
  el.hidden = !offers.length;
  const mine = room.your_seats || [];
  for (const [kind, seat] of offers) {
    const offers = kind === "draw" ? t("offer.offersDraw", { name: seatName(room, seat) })
      : t("offer.asksTakeback", { name: seatName(room, seat) });
    const box = h("div", { class: "offer", "data-offer": kind });
    if (mine.includes(1 - seat) && !mine.includes(seat)) {
      box.append(h("p", { id: `${kind}-offer-text` }, offers),
        h("div", { class: "row" },
          h("button", { class: "btn primary", id: `accept-${kind}-btn`, type: "button",
            on: { click: () => app.offer(`accept_${kind}`) } }, t("common.accept")),
          h("button", { class: "btn", id: `decline-${kind}-btn`, type: "button",
            on: { click: () => app.offer(`decline_${kind}`) } }, t("common.decline"))));
    } else if (mine.includes(seat)) {
      box.append(h("p", { id: `${kind}-offer-text` },
        kind === "draw" ? t("offer.youOfferedDraw") : t("offer.youAskedTakeback")));
    } else {
      box.append(h("p", { id: `${kind}-offer-text` }, offers));
    }
    el.append(box);
  }
}

/** The rating change a rated game's end made, for the result box: "1500 → 1512 (+12)". */
export function ratingChangeLine(room) {
  const rc = room.rating_change;
  if (room.status !== "finished" || !Array.isArray(rc) || rc.length !== 2) return null;
  const mine = room.your_seats || [];
  const seats = mine.length === 1 ? [mine[0]] : [0, 1];
  return h("div", { class: "rating-change", id: "rating-change" }, seats.map((s) => {
    const before = Math.round(rc[s].before), after = Math.round(rc[s].after);
    const d = after - before;
    const change = `${d > 0 ? "+" : d < 0 ? "−" : "±"}${Math.abs(d)}`;
    const line = mine.length === 1 ? t("offer.yourRatingChange", { before: String(before), after: String(after), change })
      : t("offer.ratingChange", { name: seatName(room, s), before: String(before), after: String(after), change });
    return h("span", { class: `rc ${d > 0 ? "up" : d < 0 ? "down" : "same"}`, "data-seat": s }, line);
  }));
}

/** What kind of game it is: rated or casual, and its clock ("5+3"). */
export function gameKind(room) {
  const clock = room.room_options && room.room_options.clock;
  const aborted = room.result && room.result.reason === "aborted";
  const parts = [room.rated && !aborted ? t("offer.ratedKind") : aborted && room.rated ? t("offer.abortedUnrated") : t("offer.casualKind")];
  if (clock) {
    const base = clock.base_ms / 60000;
    parts.push(`${fmtNumber(base, { maximumFractionDigits: 1 })}+${Math.round((clock.increment_ms || 0) / 1000)}`);
  } else parts.push(t("meet.noClockShort"));
  return parts.join(" · ");
}

/** A tournament game says so, with a link to its tournament (known from the server's
 * tournament_game, which seated this page). */
export function renderTournamentLink(app, room) {
  const el = document.getElementById("room-tournament");
  const game = app.tournamentGames && app.tournamentGames.get(room.room_id);
  if (!el) return;
  el.hidden = !game;
  if (!game) return;
  el.href = `tournaments/${encodeURIComponent(game.tournament_id)}`;
  el.textContent = t("offer.tournamentRound", { round: game.round });
}

/** A chat line's room: the players' or the spectators' (a line without it: the players'). */
export function chatAudience(m) {
  return m.audience === "spectators" ? "spectators" : "players";
}

export function audienceTag(m) {
  const a = chatAudience(m);
  return h("span", { class: `tag chat-${a}`, title: a === "players" ? t("chat.playersTitle") : t("chat.spectatorsTitle") },
    a === "players" ? t("chat.players") : t("chat.spectators"));
}
