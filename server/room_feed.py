"""The followers of one live room and what they are sent.

A :class:`Feed` holds the connections that follow a room (players and spectators) and
writes them its messages: the snapshot (``room``), the ``update`` after a move, a bot's
``analysis``, chat lines and the ``rematch_offer``. Each text is written once for everyone
who sees the same thing; the asker's copy carries ``re``. The room's owner
(:class:`tablas.server.live_room.LiveRoom`) calls it, under the room's lock, once a change is on
disk.
"""

from __future__ import annotations

from tablas.engine.search.decision import SearchInfo
from tablas.engine.search.profiles import profile
from tablas.server import views
from tablas.server.connections import Conn
from tablas.server.protocol import (
    Analysis,
    ChatMessage,
    OfferNews,
    RematchOffer,
    ResignDeclined,
    json_text,
    with_re,
)
from tablas.server.protocol import ResignOffer as ResignOfferMessage
from tablas.server.room import Action, BotJob, Room
from tablas.server.room_services import RoomEvents, RoomServices
from tablas.server.rules.endings import ResignOffer


class Feed:
    """Who follows one room, and the messages they are sent."""

    def __init__(self, room: Room, services: RoomServices, events: RoomEvents) -> None:
        self.room = room
        self.services = services
        self.events = events
        self.conns: set[Conn] = set()
        self.spectators: set[Conn] = set()
        self._final_analysis_ply: int | None = None  # no more live analysis for this ply

    # --- followers -------------------------------------------------------------------------

    def subscribe(self, conn: Conn, spectator: bool) -> None:
        """``conn`` follows the room from now on (as a spectator, or as a seated player)."""
        room_id = self.room.room_id
        self.conns.add(conn)
        conn.rooms.pop(room_id, None)  # the latest subscription goes last
        conn.rooms[room_id] = None
        if spectator:
            self.spectators.add(conn)
        else:
            self.spectators.discard(conn)
            if conn.player_id is not None:
                self.services.presence.seated(conn.player_id, room_id)
        self.events.subscribed(conn)

    def unsubscribe(self, conn: Conn) -> None:
        self.conns.discard(conn)
        self.spectators.discard(conn)
        conn.rooms.pop(self.room.room_id, None)

    def watch(self, player_id: str | None) -> None:
        """``player_id``'s seat went to a bot: their connections stay, watching."""
        for c in self.conns:
            if c.player_id == player_id and not self.room.seats_of(player_id):
                self.spectators.add(c)

    # --- messages --------------------------------------------------------------------------

    def _snapshot_text(self, viewer: str | None) -> str:
        return json_text(views.snapshot_data(self.room, viewer, self.services.presence.connected,
                                             len(self.spectators), self.services.claim_after))

    def snapshot_for(self, conn: Conn, re: str | int | None = None) -> str:
        """The ``room`` message as ``conn`` sees it, answering ``re``."""
        return with_re(self._snapshot_text(conn.player_id), re)

    def send_snapshot(self, answer: Conn | None = None, re: str | int | None = None) -> None:
        room = self.room
        # Everyone without a seat here sees the same snapshot: written once for them all.
        texts: dict[str | None, str] = {}
        for c in self.conns:
            viewer = c.player_id if room.seats_of(c.player_id) else None
            text = texts.get(viewer)
            if text is None:
                text = texts[viewer] = self._snapshot_text(viewer)
            c.send(with_re(text, re) if c is answer else text)

    def send_update(self, action: Action, answer: Conn | None, re: str | int | None) -> None:
        room = self.room
        # Written once: without the legal moves (for most followers), and with them (for
        # the seat to move), from one dict: the rest of an update is the same for all.
        data = views.update_data(room, action, [])
        texts: dict[bool, str] = {}
        for c in self.conns:
            legal = room.legal_for(c.player_id)
            text = texts.get(bool(legal))
            if text is None:
                data["legal_moves"] = legal
                text = texts[bool(legal)] = json_text(data)
            c.send(with_re(text, re) if c is answer else text)

    def send_analysis(self, job: BotJob, info: SearchInfo, *, final: bool) -> None:
        """A bot's thoughts to the spectators (and the players, with ``show_analysis``);
        never for a ply the room has left, never live after the final one."""
        room = self.room
        if (room.status != "playing" or room.ply != job.ply or room.bot_to_move() != job.seat
                or self._final_analysis_ply == job.ply):
            return
        if final:
            self._final_analysis_ply = job.ply
        targets = self.conns if room.room_options.show_analysis else self.spectators
        if not targets:
            return
        scale = profile(room.game_id).score
        msg = Analysis(
            room_id=room.room_id, ply=job.ply, seat=job.seat, depth=info.depth,
            score=info.score, pv=list(info.pv), nodes=info.nodes, final=final,
            proven=info.proven, distance=info.distance, score_unit=scale.unit,
            score_typical=scale.typical,
        ).to_json()
        for c in targets:
            c.send(msg)

    def send_chat(self, line: ChatMessage, asker: Conn, re: str | int | None) -> None:
        """A chat line (on disk already) to every follower, the asker's copy answering ``re``."""
        for c in self.conns:
            line.re = re if c is asker else None
            c.send(line.to_json())

    def send_resign_offer(self, offer: ResignOffer, asker: Conn, re: str | int | None) -> None:
        """A resignation offered (contract section 8), to every follower."""
        self._send_all(ResignOfferMessage(room_id=self.room.room_id, seat=offer.seat,
                                          points=offer.points).to_json(), asker, re)

    def send_resign_declined(self, asker: Conn | None, re: str | int | None) -> None:
        """The resignation offered was declined: play goes on."""
        self._send_all(ResignDeclined(room_id=self.room.room_id).to_json(), asker, re)

    def send_offer_news(self, kind: str, seat: int, asker: Conn | None,
                        re: str | int | None) -> None:
        """A draw offer or a takeback asked for, or declined (contract section 7)."""
        news = OfferNews.model_validate({"type": kind, "room_id": self.room.room_id,
                                         "seat": seat})
        self._send_all(news.to_json(), asker, re)

    def send_takeback(self, seat: int, taken: int, asker: Conn | None,
                      re: str | int | None) -> None:
        """The ``update`` of a takeback (on disk already): the position restored, the turn
        back to ``seat``, ``taken`` actions gone."""
        room = self.room
        data = views.takeback_data(room, seat, taken)
        for c in self.conns:
            data["legal_moves"] = room.legal_for(c.player_id)
            text = json_text(data)
            c.send(with_re(text, re) if c is asker else text)
        if asker is not None and asker not in self.conns:
            data["legal_moves"] = room.legal_for(asker.player_id)
            asker.send(with_re(json_text(data), re))

    def _send_all(self, text: str, asker: Conn | None, re: str | int | None) -> None:
        for c in self.conns:
            c.send(with_re(text, re) if c is asker else text)
        if asker is not None and asker not in self.conns:
            asker.send(with_re(text, re))

    def offer_rematch(self, player_id: str, name: str, new_room_id: str) -> None:
        """Tells everyone following this room that ``player_id`` opened ``new_room_id`` as
        its rematch: the server's word, which no chat line can imitate."""
        offer = RematchOffer(room_id=self.room.room_id, new_room_id=new_room_id,
                             player_id=player_id, name=name).to_json()
        for c in self.conns:
            c.send(offer)
