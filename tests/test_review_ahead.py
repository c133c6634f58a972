"""A review ready when the game ends (server/review_ahead.py, docs/review.md): games played
against a bot at a person's pace over real sockets, then their review asked for; it equals
the review computed from scratch for the same game (the games here are solved exactly, so
the same game has the same verdicts; among moves of equal value the best one named may
differ), and while the game was played its moves were judged
in the background, so that at the end little or nothing is left to compute. Whether the
background work can hold up a bot's decision is the scheduler's rule, checked against a
model in tests/test_bot_turns_background.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from server_support import Client, Subprocess, create, running
from tablas.server.review_ahead import review_entries
from test_server_records import get, get_json, review

PACE = 0.3  # seconds a person takes over each move here: time for the background's work


async def play_at_pace(c: Client, room: str, view: dict[str, Any]) -> dict[str, Any]:
    """Seat 0's moves (its first legal move each time, after ``PACE`` seconds) until the
    game ends; the last view."""
    while view["status"] != "finished":
        if view.get("to_move") == 0 and view.get("legal_moves"):
            await asyncio.sleep(PACE)
            await c.send({"type": "move", "room_id": room, "ply": view["ply"],
                          "move": view["legal_moves"][0]})
        view = await c.expect("update", timeout=60)
    return view


# Among moves of the same value the engine names the one its search met first, which
# depends on the search tables a process has kept from earlier work: two reviews of the same
# game computed from scratch in two processes may name different best moves of equal value.
CHOICE = ("best_move_text", "best_move")


def verdicts(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries but the engine's pick among equal moves."""
    return [{k: v for k, v in e.items() if k not in CHOICE} for e in entries]


async def from_scratch(url: str, room: str) -> list[dict[str, Any]]:
    """The game's review entries computed here, whole, from its export."""
    record = await get_json(url, f"/api/rooms/{room}/export")
    actions = [(a["move"], a["dice"]) for a in record["actions"]]
    return await asyncio.to_thread(review_entries, record["game"], record["options"],
                                   record["opening_rolls"], actions)


async def same_review(url: str, room: str, served: list[dict[str, Any]]) -> None:
    """``served`` has the verdicts of the review computed from scratch for the game (every
    field but the best move's name, whose value the equal losses against it show to be the
    same), and names a best move exactly where that review does."""
    scratch = await from_scratch(url, room)
    assert verdicts(served) == verdicts(scratch)
    for mine, theirs in zip(served, scratch, strict=True):
        assert (mine["best_move_text"] is None) == (theirs["best_move_text"] is None)


class Foreground:
    """The plies each review asked for had computed when it was asked (the bot pool's
    ``compute_for`` calls outside the background class; all of them: ``None``)."""

    def __init__(self, srv: Any) -> None:
        self.plies: list[Any] = []
        self.background = 0
        self.inner = srv.bots.compute_for
        srv.bots.compute_for = self

    async def __call__(self, share: str, fn: Any, **kwargs: Any) -> Any:
        if kwargs.get("background"):
            self.background += 1
        else:
            self.plies.append(fn.args[4] if len(fn.args) > 4 else None)
        return await self.inner(share, fn, **kwargs)


async def test_a_review_asked_at_the_end_is_the_one_judged_while_playing(tmp_path: Path
                                                                         ) -> None:
    """Tic-tac-toe and Grundy against the random bot at a person's pace: every move was
    judged in the background as it was played (one job each); at the end at most the last two
    are left (computed then, in one job), and the review served equals the one computed from
    scratch."""
    async with running(tmp_path / "t.db") as (srv, url):
        counted = Foreground(srv)
        c = Client(url)
        await c.connect("Ana")
        for game, options in (("tictactoe", {}), ("grundy", {"heap": 12})):
            counted.plies.clear()
            counted.background = 0
            room, view = await create(c, game, [{"kind": "human"},
                                                {"kind": "bot", "level": "random"}],
                                      options=options)
            end = await play_at_pace(c, room, view)
            code, _, body = await review(url, room)
            assert code == 200
            served = json.loads(body)["moves"]
            assert len(served) == end["ply"] > 2
            await same_review(url, room, served)
            # Every move was judged ahead but the last two at most (the person's last move
            # waits while the bot answers it, and the bot's answer ended the game): those are
            # what is computed at the end, the rest is not judged again.
            last = end["ply"] - 1
            assert counted.background >= end["ply"] - 2
            assert all(p is not None and set(p) <= {last - 1, last} for p in counted.plies), \
                counted.plies
        await c.close()


async def test_off_judges_nothing_while_playing(tmp_path: Path) -> None:
    """``review_ahead=False`` (``--review-ahead off``): no background job while the game is
    played; the review is computed whole when asked for, and is the same."""
    async with running(tmp_path / "t.db", review_ahead=False) as (srv, url):
        counted = Foreground(srv)
        c = Client(url)
        await c.connect("Ana")
        room, view = await create(c, "tictactoe", [{"kind": "human"},
                                                   {"kind": "bot", "level": "random"}])
        await play_at_pace(c, room, view)
        assert counted.background == 0
        code, _, body = await review(url, room)
        assert code == 200 and counted.plies == [None]
        await same_review(url, room, json.loads(body)["moves"])
        await c.close()


async def test_tablas_serve_serves_the_review_judged_ahead(tmp_path: Path) -> None:
    """The command itself (``tablas serve``, review ahead on by default), Grundy against the
    random bot at a person's pace: the review served as the game ends equals the review
    computed from scratch."""
    server = Subprocess(tmp_path / "t.db", tmp_path / "serve.log", workers=2)
    server.start()
    try:
        c = Client(server.url)
        await c.connect("Ana")
        room, view = await create(c, "grundy", [{"kind": "human"},
                                                {"kind": "bot", "level": "random"}],
                                  options={"heap": 14})
        await play_at_pace(c, room, view)
        code, _, body = await review(server.url, room)
        assert code == 200
        await same_review(server.url, room, json.loads(body)["moves"])
        again = await get(server.url, f"/api/rooms/{room}/review")
        assert again[0] == 200 and again[2] == body  # stored, served from the store
        await c.close()
    finally:
        server.terminate()
