"""The review's ``players`` summary (contract section 7), over a real socket against a real
server: for each side, its decisions (entries not forced), how many of its entries are
inaccuracies, mistakes and blunders, and its average loss per decision (backgammon: the error
rate, equity per decision); every number is what the review's own entries add up to. A review
stored before the summary existed gets it on the way out."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from server_support import connected, create, running
from tablas.engine.review import players_summary
from test_server_records import HUMAN, _play, _tictactoe, get, review


def added_up(moves: list[dict[str, Any]], seat: int) -> dict[str, Any]:
    """The summary of ``seat`` recomputed from the entries, independently of the server."""
    mine = [m for m in moves if m["seat"] == seat]
    decisions = [m for m in mine if not m["forced"]]
    loss = sum(m["loss"] for m in mine)
    return {
        "seat": seat,
        "moves": len(decisions),
        "inaccuracies": len([m for m in mine if m["verdict"] == "inaccuracy"]),
        "mistakes": len([m for m in mine if m["verdict"] == "mistake"]),
        "blunders": len([m for m in mine if m["verdict"] == "blunder"]),
        "average_loss": round(loss / len(decisions), 4) if decisions else 0.0,
    }


async def test_a_tictactoe_summary_counts_the_blunder(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    async with running(db) as (_srv, url):
        a, b = await connected(url, "Ana", "Bo")
        room = await _tictactoe(a, b)
        await _play(a, b, room, [4, 1, 0, 8, 6, 3, 2])  # O's edge reply loses: a blunder
        code, _, body = await review(url, room)
        assert code == 200
        reviewed = json.loads(body)
        moves, players = reviewed["moves"], reviewed["players"]
        assert players == [added_up(moves, 0), added_up(moves, 1)]
        x, o = players
        assert o["blunders"] >= 1 and o["average_loss"] > 0
        assert x["blunders"] == 0 and x["average_loss"] == 0.0
        assert x["moves"] + o["moves"] <= len(moves)
        # Stored with it, and a review stored before the summary gets it when served.
        with sqlite3.connect(db) as con:
            con.execute("UPDATE reviews SET json = ? WHERE room_id = ?",
                        (json.dumps({k: v for k, v in reviewed.items() if k != "players"}),
                         room))
        con.close()
    async with running(db) as (_srv, url):
        code, _, body = await get(url, f"/api/rooms/{room}/review")
        assert code == 200 and json.loads(body)["players"] == players


async def test_a_backgammon_summary_is_its_error_rate_per_decision(tmp_path: Path) -> None:
    """Both seats played by one person, first legal play each time, with a resignation for a
    single at the end (a blunder at any early position): every number of the summary adds
    up from the entries, and the resigner's blunder is counted."""
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        (a,) = await connected(url, "Ana")
        room, _ = await create(a, "backgammon", [HUMAN, HUMAN], 0, {"cube": False})
        view = await a.request({"type": "join", "room_id": room, "seat": 1}, "room")
        for _ in range(6):
            view = await a.request({"type": "move", "room_id": room, "ply": view["ply"],
                                    "move": view["legal_moves"][0]}, "update")
        await a.request({"type": "resign", "room_id": room, "points": 1}, "resign_offer")
        await a.request({"type": "accept_resign", "room_id": room}, "update")
        code, _, body = await review(url, room)
        assert code == 200
        reviewed = json.loads(body)
        moves, players = reviewed["moves"], reviewed["players"]
        assert len(moves) == 7
        assert players == [added_up(moves, 0), added_up(moves, 1)]
        resigner = moves[-1]["seat"]
        assert moves[-1]["verdict"] == "blunder" and not moves[-1]["forced"]
        assert players[resigner]["blunders"] >= 1
        assert players[resigner]["average_loss"] > 0


def test_the_summary_of_no_decisions_and_of_old_entries() -> None:
    """A side with no decision has an average of 0; an entry from before ``forced`` counts as
    forced when it names no best move and lost nothing."""
    old = [{"seat": 0, "verdict": "best", "loss": 0.0, "best_move_text": None},
           {"seat": 0, "verdict": "mistake", "loss": 0.1, "best_move_text": "13/7"},
           {"seat": 0, "verdict": "best", "loss": 0.0, "best_move_text": "8/2"}]
    zero, one = players_summary(old)
    assert zero == {"seat": 0, "moves": 2, "inaccuracies": 0, "mistakes": 1, "blunders": 0,
                    "average_loss": 0.05}
    assert one == {"seat": 1, "moves": 0, "inaccuracies": 0, "mistakes": 0, "blunders": 0,
                   "average_loss": 0.0}
