"""Arena players for the tests (contract section 19): each a connected, registered player
who answers every ``tournament_game`` of an arena by a plan the test gives (who wins, who
goes berserk), and a book of what they all saw (when each was paired and was free again,
the clocks around each berserk), to check the server against.

The results are the plan's: the loser resigns, a draw is played out on tic-tac-toe's drawn
line. Both players of a game first say they are ready (after any berserk of theirs), so a
resignation never comes before the opponent's berserk."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Protocol

from server_support import Client
from test_server_ratings import PASSWORD, get

# A drawn game of tic-tac-toe, cell by cell, seat 0 first.
DRAW_LINE = [0, 4, 8, 1, 7, 6, 2, 5, 3]
STREAK_AFTER = 2


class Plan(Protocol):
    def outcome(self, me: str, opponent: str) -> str:
        """``"win"``, ``"lose"`` or ``"draw"`` for ``me`` (names) against ``opponent``."""
        ...

    def berserk(self, me: str, n: int) -> bool:
        """Whether ``me`` goes berserk in their ``n``-th game (from 1)."""
        ...


@dataclass
class Seen:
    """One game as its players saw it."""

    room_id: str
    paired_at: dict[str, float] = field(default_factory=dict)  # player: monotonic time
    paired_wall_ms: int = 0
    ended_at: float | None = None


@dataclass
class Book:
    """What every player saw, in one place (the players run in this process)."""

    free_at: dict[str, float] = field(default_factory=dict)  # player: since when free
    games: dict[str, Seen] = field(default_factory=dict)  # room: what was seen of it
    delays: list[float] = field(default_factory=list)  # pairing delays (s)
    ready: defaultdict[tuple[str, str], asyncio.Event] = field(
        default_factory=lambda: defaultdict(asyncio.Event))
    # (player, clock before, clock after the berserk, clock after its first move or None,
    # ms from asking for the first to receiving the second: at most what ran in between)
    berserks: list[tuple[str, int, int, int | None, float]] = field(default_factory=list)
    # (player, opponent, when told, each other player's (busy, free since) then)
    rematches: list[tuple[str, str, float, dict[str, tuple[bool, float]]]] = field(
        default_factory=list)
    told: defaultdict[str, list[float]] = field(
        default_factory=lambda: defaultdict(list))  # player: when told of each game
    last: dict[str, str] = field(default_factory=dict)  # player: last opponent
    over: asyncio.Event = field(default_factory=asyncio.Event)
    errors: list[str] = field(default_factory=list)  # what stopped a player (the test fails)
    busy: set[str] = field(default_factory=set)
    # (name, n): the n-th game of that player (both its players) waits for the event before
    # it is played to its end; room_holds: the rooms held so.
    holds: dict[tuple[str, int], asyncio.Event] = field(default_factory=dict)
    room_holds: dict[str, asyncio.Event] = field(default_factory=dict)
    berserked: dict[str, tuple[str, int]] = field(default_factory=dict)  # room: (who, clock)
    # (clock just after the berserk, the same clock read again after a restart)
    restored: list[tuple[int, int]] = field(default_factory=list)


class ArenaPlayer:
    def __init__(self, url: str, name: str, address: str, book: Book, plan: Plan) -> None:
        self.url, self.name, self.address = url, name, address
        self.book, self.plan = book, plan
        self.client = Client(url, source=address)
        self.player_id = ""
        self.token = ""
        self.names: dict[str, str] = {}
        self.played = 0
        self.games: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.rooms: defaultdict[str, asyncio.Queue[dict[str, Any]]] = defaultdict(asyncio.Queue)
        self.answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._pump: asyncio.Task[None] | None = None
        self.running: asyncio.Task[None] | None = None

    async def register(self) -> None:
        welcome = await self.client.connect(self.name)
        self.player_id, self.token = welcome["player_id"], welcome["token"]
        await self.client.request({"type": "register", "password": PASSWORD}, "registered")
        self._pump = asyncio.create_task(self.pump())

    async def reconnect(self, url: str) -> None:
        """Again, after its server restarted (``url``: where it listens now)."""
        await self.stop()
        self.url = url
        self.client = Client(url, source=self.address)
        self.games = asyncio.Queue()
        self.rooms.clear()
        await self.client.connect(self.name, token=self.token)
        self._pump = asyncio.create_task(self.pump())

    async def stop(self) -> None:
        for task in (self.running, self._pump):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self.running = self._pump = None
        await self.client.close()

    async def pump(self) -> None:
        """Sorts what arrives: answers, tournament games, each room's messages."""
        while True:
            try:
                m = await self.client.recv(timeout=3600)
            except Exception:  # the connection closed (its server was killed)
                return
            fut = self.answers.pop(m.get("re", -1), None) if "re" in m else None
            if fut is not None and not fut.done():
                fut.set_result(m)
            elif m.get("type") == "tournament_game":
                self.games.put_nowait(m)
            elif "room_id" in m:
                self.rooms[m["room_id"]].put_nowait(m)

    async def ask(self, msg: dict[str, Any]) -> dict[str, Any]:
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.answers[self.client.n + 1] = fut
        await self.client.send(msg)
        return await asyncio.wait_for(fut, 20)

    async def ok(self, msg: dict[str, Any], answer: str) -> dict[str, Any]:
        got = await self.ask(msg)
        assert got["type"] == answer, (msg, got)
        return got

    def play(self, tid: str) -> None:
        self.book.free_at.setdefault(self.player_id, time.monotonic())
        self.running = asyncio.create_task(self.answer_games(tid))

    async def answer_games(self, tid: str) -> None:
        while not self.book.over.is_set():
            try:
                g = await asyncio.wait_for(self.games.get(), 0.2)
            except TimeoutError:
                continue
            try:
                await self.one_game(g)
            except Exception as e:
                self.book.errors.append(f"{self.name}: {e!r}")
                raise

    async def one_game(self, g: dict[str, Any]) -> None:
        book, me = self.book, self.player_id
        room_id, seat = g["room_id"], g["seat"]
        now = time.monotonic()
        seen = book.games.setdefault(room_id, Seen(room_id, paired_wall_ms=int(time.time() * 1000)))
        first_time = me not in seen.paired_at
        if first_time:
            seen.paired_at[me] = now
            book.told[me].append(now)
        asked = time.monotonic()
        view = await self.ok({"type": "join", "room_id": room_id}, "room")
        opponent = view["seats"][1 - seat]["player_id"]
        if first_time:
            self.played += 1
            if len(seen.paired_at) == 2:  # both told: the pair's delay, from both free
                since = max(book.free_at[me], book.free_at[opponent])
                book.delays.append(max(0.0, min(seen.paired_at.values()) - since))
            if book.last.get(me) == opponent:
                book.rematches.append((me, opponent, now, {
                    q: (q in book.busy, since) for q, since in book.free_at.items()
                    if q not in (me, opponent)}))
            book.last[me] = opponent
            book.busy.add(me)
        outcome = self.plan.outcome(self.name, self.names[opponent])
        hold = book.holds.get((self.name, self.played)) if first_time else None
        if hold is not None:
            book.room_holds[room_id] = hold
        if first_time and view["status"] == "playing" and self.plan.berserk(self.name,
                                                                            self.played):
            view = await self.berserk(room_id, seat, view, outcome, asked)
        elif not first_time and book.berserked.get(room_id, ("", 0))[0] == me:
            book.restored.append((book.berserked[room_id][1], view["clocks"][seat]))
        book.ready[(room_id, me)].set()
        await book.ready[(room_id, opponent)].wait()
        held = book.room_holds.get(room_id)
        if held is not None:
            await held.wait()
        await self.finish(room_id, seat, outcome, view)
        book.free_at[me] = time.monotonic()
        book.busy.discard(me)
        seen.ended_at = book.free_at[me]

    async def berserk(self, room_id: str, seat: int, view: dict[str, Any], outcome: str,
                      asked: float) -> dict[str, Any]:
        """Goes berserk; then, if it is its turn and the game is not to be drawn, moves
        (to see the increment gone). The room as it is after."""
        before = view["clocks"][seat]
        view = await self.ok({"type": "berserk", "room_id": room_id}, "room")
        after, moved = view["clocks"][seat], None
        elapsed = (time.monotonic() - asked) * 1000
        self.book.berserked[room_id] = (self.player_id, after)
        if view["to_move"] == seat and outcome != "draw":
            view = await self.ok({"type": "move", "room_id": room_id, "ply": view["ply"],
                                  "move": {"cell": DRAW_LINE[view["ply"]]}}, "update")
            moved = view["clocks"][seat]
        self.book.berserks.append((self.name, before, after, moved, elapsed))
        return view

    async def finish(self, room_id: str, seat: int, outcome: str, view: dict[str, Any]
                     ) -> None:
        """Plays the game to the plan's end (``view``: the room as last seen) and waits for
        it to be over."""
        queue = self.rooms[room_id]
        if outcome == "lose" and view["status"] == "playing":
            await self.client.send({"type": "resign", "room_id": room_id})
        while view["status"] != "finished":
            if outcome == "draw" and view.get("to_move") == seat and view["status"] == "playing":
                await self.client.send({"type": "move", "room_id": room_id, "ply": view["ply"],
                                        "move": {"cell": DRAW_LINE[view["ply"]]}})
            view = await asyncio.wait_for(queue.get(), 30)


async def watch_over(url: str, tid: str, book: Book, seconds: float = 120) -> dict[str, Any]:
    """Waits for the arena to finish; tells the players."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert not book.errors, book.errors
        detail: dict[str, Any] = await get(url, f"/api/tournaments/{tid}")
        if detail["status"] == "finished":
            book.over.set()
            return detail
        await asyncio.sleep(0.2)
    raise AssertionError(f"the arena did not finish: {detail}")


def expected_standings(detail: dict[str, Any]) -> dict[str, tuple[int, int, bool, int]]:
    """Each entrant's (points, wins, on a streak, games) from the pairings in the order
    paired, by section 19's rules, written here apart from the server's: a win 2, a draw 1, a
    loss 0; doubled after two wins in a row until a game not won; a berserk win one more."""
    points = {s["player_id"]: 0 for s in detail["standings"]}
    wins = dict.fromkeys(points, 0)
    games = dict.fromkeys(points, 0)
    in_a_row = dict.fromkeys(points, 0)
    for g in detail["pairings"]:
        r = g["result"]
        if r is None or r["reason"] == "aborted":
            continue
        for seat, p in enumerate(g["players"]):
            won = r["winner"] == seat
            score = 2 if won else 1 if r["winner"] is None else 0
            if in_a_row[p] >= STREAK_AFTER:
                score *= 2
            if won and g["berserk"][seat]:
                score += 1
            points[p] += score
            games[p] += 1
            wins[p] += won
            in_a_row[p] = in_a_row[p] + 1 if won else 0
    return {p: (points[p], wins[p], in_a_row[p] >= STREAK_AFTER, games[p]) for p in points}


def check_standings(detail: dict[str, Any]) -> None:
    mine = expected_standings(detail)
    theirs = {s["player_id"]: (s["points"], s["wins"], s["streak"], s["games"])
              for s in detail["standings"]}
    assert theirs == mine
    order = [(s["points"], s["wins"]) for s in detail["standings"]]
    assert order == sorted(order, reverse=True)
    for s, t in zip(detail["standings"], detail["standings"][1:]):
        assert (t["rank"] == s["rank"]) == ((t["points"], t["wins"]) == (s["points"], s["wins"]))


def idle_while_rematched(book: Book, margin: float = 1.0) -> list[tuple[str, str, str]]:
    """Rematches made while a third player was free: free (as they saw it) since ``margin``
    before the rematch was told, and told of no game of their own until ``margin`` after it
    (so not paired at the same look). Empty: none. The margin (1 s) covers the time a
    pairing takes to reach its players on a busy machine; the three-player test
    (tests/test_server_arena.py) checks rematches exactly, by the order of the games."""
    out = []
    for me, opponent, at, others in book.rematches:
        for q, (busy, since) in others.items():
            next_told = min((t for t in book.told[q] if t > since), default=float("inf"))
            if not busy and since < at - margin and next_told > at + margin:
                out.append((me, opponent, q))
    return out


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * 9 // 10) - 1)]
