"""The bot account's WebSocket session (contract section 12): logs in, plays every seat it
gets (one :class:`~.game.GameLoop` per room), accepts challenges for its games as
``--accept`` says, keeps ``--seek`` seeks open, and comes back when the server goes away.

Logging in: with the token of an earlier ``welcome`` if there is one (it survives a server
restart), else with the name and password; a name nobody has registered is registered then
as a bot account (``register`` with ``"bot": true``). A wrong password, or an account that is
a person's, stops the adapter (exit code 2): no retry can mend them.

Places: the adapter holds at most ``--max-games`` games at once, counting its open seeks
and the challenges it has accepted or sent, as the server counts a bot account's 8 places
(:mod:`tablas.server.bot_accounts`). A challenge that comes while every place is taken waits,
oldest first, and is accepted when a game ends, unless it is withdrawn or expires (60 s)
first. Places free up for waiting challenges before they do for seeks.

``--challenge NAME`` (additive): :mod:`.challenger` keeps its books; its challenges out take
places too.

Reconnecting: after the connection closes, it tries again after 0.5 s, then twice as long each
time up to 15 s (with some jitter, so that many bots do not come back at once). The games go
on meanwhile: their engines keep their processes, and each room is joined again (``welcome``
lists the seats held), its snapshot putting the game loop right.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import random
from typing import Any, TextIO

from tablas.server.bot_adapter import contain
from tablas.server.bot_adapter.challenger import RETRY_S, Challenger
from tablas.server.bot_adapter.game import GameLoop, Message
from tablas.server.bot_adapter.options import BotOptions
from tablas.server.client import ProtocolClient, Refused

log = logging.getLogger("tablas.bot")

BACKOFF_MIN = 0.5  # seconds before the first reconnection
BACKOFF_MAX = 15.0


class Fatal(Exception):
    """Stops the adapter: nothing it can do will log it in (its text says why)."""


def refusal(opts: BotOptions, game: str, registered: bool) -> str | None:
    """Why the adapter declines a challenge to ``game`` from a registered player or a guest
    (its ``--games`` and ``--accept``), or None: it takes it when a place is free."""
    if game not in opts.games:
        return f"it plays {', '.join(opts.games)}, not {game}"
    if opts.accept == "none":
        return "--accept none"
    if opts.accept == "registered" and not registered:
        return "--accept registered, and the challenger is a guest"
    return None


class Session:
    def __init__(self, opts: BotOptions, out: TextIO) -> None:
        self.opts = opts
        self.out = out
        self.client: ProtocolClient | None = None
        self.token: str | None = None
        self.loops: dict[str, GameLoop] = {}
        self._errors: dict[int, Any] = {}  # message id -> its error handler
        self.sent_for: dict[int, str] = {}  # a seek's or a challenge's message id -> its game
        # Places: seeks open (id -> game) and asked for (game -> how many), challenges
        # waiting (id -> offer, oldest first) and accepted, the --challenge ones out.
        self.seeks: dict[str, str] = {}
        self.seeking: collections.Counter[str] = collections.Counter()
        self.waiting: dict[str, Message] = {}
        self.accepting: set[str] = set()
        self.full = False  # the server said every place is taken: wait for a game's end
        self.challenger = None if opts.challenge is None else \
            Challenger(opts.challenge, opts.games, opts.clock_json)

    # --- running ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Until cancelled; :class:`Fatal` when it cannot log in."""
        delay = BACKOFF_MIN
        try:
            while True:
                try:
                    client = await ProtocolClient.open(self.opts.server, None,
                                                       on_message=self._on_message,
                                                       keep=False, open_timeout=10)
                except Exception as e:  # refused, unreachable, a bad handshake
                    log.warning("cannot reach %s (%s): trying again in %.1f s",
                                self.opts.server, e, delay)
                    await asyncio.sleep(delay)
                    delay = _longer(delay)
                    continue
                try:
                    welcome = await self._log_in(client)
                except Refused as e:
                    await client.close()
                    log.warning("logging in failed (%s): trying again in %.1f s", e, delay)
                    await asyncio.sleep(delay)
                    delay = _longer(delay)
                    continue
                except BaseException:
                    await client.close()
                    raise
                delay = BACKOFF_MIN
                log.info("logged in to %s as %s", self.opts.server, welcome["name"])
                self._connected(client, welcome)
                with contextlib.suppress(Exception):  # closed, however it closed
                    await asyncio.shield(client.reader)
                self._disconnected()
                log.warning("the connection to %s closed: reconnecting in %.1f s",
                            self.opts.server, delay)
                await asyncio.sleep(delay)
                delay = _longer(delay)
        finally:
            await self._close()

    async def _close(self) -> None:
        for loop in list(self.loops.values()):
            loop.engine.kill_now()
            if loop.task is not None:
                loop.task.cancel()
        contain.end_all()  # and whatever the engines started, wherever it went
        if self.client is not None:
            await self.client.close()

    async def _log_in(self, client: ProtocolClient) -> Message:
        name, password = self.opts.name, self.opts.password
        welcome: Message | None = None
        if self.token is not None:
            try:
                welcome = await client.request({"type": "hello", "name": name,
                                                "token": self.token})
            except Refused as e:
                if e.code != "not_authenticated":
                    raise
                self.token = None
        if welcome is None:
            try:
                welcome = await client.request({"type": "hello", "name": name,
                                                "password": password})
            except Refused as e:
                if e.code != "not_authenticated":
                    raise
                welcome = await self._register(client)
        if not welcome.get("bot"):
            raise Fatal(f"{welcome['name']!r} is a person's account, not a bot account: give "
                        "the bot a name of its own (tablas bot registers it)")
        self.token = welcome["token"]
        return welcome

    async def _register(self, client: ProtocolClient) -> Message:
        """The name is nobody's (else the password was wrong): registered as a bot account
        now, on this connection."""
        name = self.opts.name
        try:
            welcome = await client.request({"type": "hello", "name": name})
        except Refused as e:
            if e.code == "name_taken":
                raise Fatal(f"wrong password for {name!r}") from None
            if e.code == "bad_request":
                raise Fatal(str(e)) from None
            raise
        try:
            await client.request({"type": "register", "password": self.opts.password,
                                  "bot": True})
        except Refused as e:
            if e.code in ("bad_request", "name_taken"):
                raise Fatal(str(e)) from None
            raise
        log.info("registered the bot account %s", name)
        return dict(welcome, registered=True, bot=True)

    def _connected(self, client: ProtocolClient, welcome: Message) -> None:
        self.client = client
        self._errors.clear()
        self.sent_for.clear()
        self.full = False
        held = {s["room_id"]: int(s["seat"]) for s in welcome.get("seats") or []}
        for room_id, seat in held.items():
            if room_id not in self.loops:
                self._new_loop(room_id, seat)
        for room_id, loop in self.loops.items():
            # Joining a seat one holds answers its snapshot, whatever became of the game.
            self.send({"type": "join", "room_id": room_id},
                      lambda e, loop=loop: loop.give_up(str(e.get("message"))))
        for tid in self.opts.tournaments:
            self.send({"type": "join_tournament", "tournament_id": tid},
                      lambda e, tid=tid: self._not_entered(tid, e))
        self._fill()

    def _not_entered(self, tid: str, e: Message) -> None:
        log.info("tournament %s: not entered: %s", tid, e.get("message"))

    def _disconnected(self) -> None:
        self.client = None
        self._errors.clear()
        # Seeks die with their connection; accepts and challenges sent may not have arrived.
        self.seeks.clear()
        self.seeking.clear()
        for cid in self.accepting:
            self.waiting[cid] = {}
        self.accepting.clear()
        if self.challenger is not None:
            self.challenger.lost_connection()

    # --- sending ----------------------------------------------------------------------------

    def send(self, msg: Message, on_error: Any = None) -> bool:
        client = self.client
        if client is None or client.reader.done():
            return False
        msg_id = client.send(msg)
        if on_error is not None:
            self._errors[msg_id] = on_error
        return True

    def ended(self, loop: GameLoop) -> None:
        if self.loops.get(loop.room_id) is loop:
            del self.loops[loop.room_id]
        if self.challenger is not None:
            self.challenger.ended(loop.room_id)
        self.full = False
        self._fill()

    # --- what the server says ---------------------------------------------------------------

    def _on_message(self, m: Message, _t: float) -> None:
        # Called by the client's reader: whatever goes wrong here must not stop the reading.
        try:
            self._route(m)
        except Exception:
            log.exception("a message could not be handled: %.200r", m)

    def _route(self, m: Message) -> None:
        kind = m.get("type")
        re = m.get("re")
        if re is not None:
            handler = self._errors.pop(re, None)
            if kind == "error":
                if handler is not None:
                    handler(m)
                else:
                    log.warning("the server refused a message: %s", m.get("message"))
                self.sent_for.pop(re, None)
                return
        if kind in ("room", "update"):
            loop = self.loops.get(str(m.get("room_id")))
            if loop is not None:
                loop.feed(m)
        elif kind in ("draw_offer", "takeback_offer"):
            self._decline(m)
        elif kind == "paired":
            self._paired(m)
        elif kind == "tournament_game":
            self._tournament_game(m)
        elif kind == "tournament_joined":
            log.info("entered the tournament %s", m.get("tournament_id"))
        elif kind == "challenge":
            self._offered(m)
        elif kind == "challenge_canceled":
            self._challenge_over(str(m["challenge_id"]), declined=False)
        elif kind == "challenge_declined":
            self._challenge_over(str(m["challenge_id"]), declined=True)
        elif kind == "challenge_sent" and re in self.sent_for:
            game = self.sent_for.pop(re)
            if self.challenger is not None:
                self.challenger.sent(game, str(m["challenge_id"]))
        elif kind == "seeking" and re in self.sent_for:
            game = self.sent_for.pop(re)
            self.seeking[game] -= 1
            self.seeks[str(m["seek_id"])] = game

    def _decline(self, m: Message) -> None:
        """The other side offers a draw or asks for a takeback (contract section 7): an
        engine plays its games out, so the adapter declines at once rather than leave the
        person waiting."""
        room_id = str(m.get("room_id"))
        loop = self.loops.get(room_id)
        if loop is not None and m.get("seat") != loop.seat:
            kind = "draw" if m["type"] == "draw_offer" else "takeback"
            self.send({"type": f"decline_{kind}", "room_id": room_id})

    def _paired(self, m: Message) -> None:
        room_id, seat = str(m["room_id"]), int(m["seat"])
        if m.get("seek_id") is not None:
            self.seeks.pop(str(m["seek_id"]), None)
        cid = m.get("challenge_id")
        if cid is not None:
            self.accepting.discard(cid)
            self.waiting.pop(cid, None)
            if self.challenger is not None and self.challenger.paired(cid, room_id, seat):
                game = next(g for g, r in self.challenger.playing.items() if r == room_id)
                if self.challenger.seats[game] == {0, 1}:
                    log.info("%s: played %s from both seats: this is the last challenge",
                             game, self.opts.challenge)
        if room_id not in self.loops:
            self._new_loop(room_id, seat)
        self._fill()

    def _tournament_game(self, m: Message) -> None:
        """A game of a tournament the account is in (however it entered): played like any
        other; its room is joined for its snapshot (a tournament's rooms are made with the
        seats taken, nobody following them)."""
        room_id, seat = str(m["room_id"]), int(m["seat"])
        if room_id in self.loops:
            return  # told again (a reconnection): the loop has it
        self._new_loop(room_id, seat)
        loop = self.loops[room_id]
        self.send({"type": "join", "room_id": room_id},
                  lambda e: loop.give_up(str(e.get("message"))))

    def _new_loop(self, room_id: str, seat: int) -> None:
        loop = GameLoop(room_id, seat, self.opts.engine, self, self.out)
        self.loops[room_id] = loop
        loop.start()

    def _offered(self, m: Message) -> None:
        cid, game, who = str(m["challenge_id"]), str(m["game"]), m.get("from") or {}
        why = refusal(self.opts, game, bool(who.get("registered")))
        if why is not None:
            log.info("declining %s's challenge to %s: %s", who.get("name"), game, why)
            self.send({"type": "decline_challenge", "challenge_id": cid})
            return
        self.waiting[cid] = m
        self._fill()
        if cid in self.waiting and self.client is not None:
            log.info("%s's challenge to %s waits: every place is taken", who.get("name"), game)

    def _challenge_over(self, cid: str, declined: bool) -> None:
        self.waiting.pop(cid, None)
        self.accepting.discard(cid)
        if self.challenger is not None:
            loop = asyncio.get_running_loop()
            game = self.challenger.over(cid, declined, loop.time())
            if game is not None and declined:
                log.warning("%s declined the challenge to %s: not challenging again",
                            self.opts.challenge, game)
            elif game is not None:
                loop.call_later(RETRY_S + 0.1, self._fill)
        self._fill()

    # --- places -------------------------------------------------------------------------------

    def _free(self) -> int:
        used = len(self.loops) + len(self.seeks) + sum(self.seeking.values()) + \
            len(self.accepting) + (0 if self.challenger is None else self.challenger.places)
        return self.opts.max_games - used

    def _fill(self) -> None:
        """Uses the free places: waiting challenges first, then --challenge, then seeks."""
        if self.client is None or self.full:
            return
        while self.waiting and self._free() > 0:
            cid = next(iter(self.waiting))
            del self.waiting[cid]
            self.accepting.add(cid)
            self.send({"type": "accept_challenge", "challenge_id": cid},
                      lambda e, cid=cid: self._accept_refused(cid, e))
        if self.challenger is not None:
            for game in self.challenger.due(asyncio.get_running_loop().time()):
                if self._free() <= 0:
                    break
                self._sent(game, self.challenger.message(game),
                           lambda e, game=game: self._challenge_refused(game, e))
        for game in self.opts.games:
            open_now = sum(1 for g in self.seeks.values() if g == game) + self.seeking[game]
            for _ in range(self.opts.seek - open_now):
                if self._free() <= 0:
                    return
                self.seeking[game] += 1
                self._sent(game, {"type": "seek", "game": game, "options": {},
                                  "clock": self.opts.clock_json, "rated": True,
                                  "rating_range": None},
                           lambda e, game=game: self._seek_refused(game, e))

    def _sent(self, game: str, msg: Message, on_error: Any) -> None:
        """Sends a seek or a challenge for ``game``; its answer says which it was."""
        client = self.client
        if client is not None and self.send(msg, on_error):
            self.sent_for[client.n] = game

    def _accept_refused(self, cid: str, e: Message) -> None:
        self.accepting.discard(cid)
        if e.get("code") == "rate_limited":  # the server counts a place we do not: wait
            self.waiting = {cid: {}, **self.waiting}
            self.full = True
        else:
            log.info("challenge %s is gone: %s", cid, e.get("message"))
        self._fill()

    def _challenge_refused(self, game: str, e: Message) -> None:
        log.warning("cannot challenge %s to %s: %s; trying again in %g s",
                    self.opts.challenge, game, e.get("message"), RETRY_S)
        assert self.challenger is not None
        loop = asyncio.get_running_loop()
        self.challenger.refused(game, loop.time())
        loop.call_later(RETRY_S + 0.1, self._fill)

    def _seek_refused(self, game: str, e: Message) -> None:
        self.seeking[game] -= 1
        log.warning("seek for %s refused: %s", game, e.get("message"))
        if e.get("code") == "rate_limited":
            self.full = True


def _longer(delay: float) -> float:
    """The next wait: twice as long, give or take a fifth (so that many bots that lost one
    server do not all come back at the same instant), at most BACKOFF_MAX."""
    return min(BACKOFF_MAX, delay * 2 * random.uniform(0.8, 1.2))
