"""What a player sees of ratings and of who is online, over a real socket and HTTP against a
real server, on SQLite and PostgreSQL (contract section 8): a rated room's final snapshot
carries each seat's ``rating_change`` (also once stored, and after a restart);
``GET /api/players/{id}/history?game=G`` the rating after each rated game, oldest first, with
the player's wins, draws and losses; ``GET /api/online`` the registered players connected
now, whether they play, and nobody else.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from pg_support import Backend, backend, pg_cluster  # noqa: F401
from server_support import Client, connected, running
from test_server_ratings import (
    HUMAN,
    NEW,
    X_WINS,
    _get,
    after_game,
    get,
    member,
    play,
    rated_room,
)


async def online(url: str) -> dict[str, dict[str, object]]:
    return {p["player_id"]: p for p in (await get(url, "/api/online"))["players"]}


async def test_rating_changes_history_and_tally(tmp_path: Path, backend: Backend  # noqa: F811
                                                ) -> None:
    async with running(backend.where, max_msgs_per_address=None) as (_srv, url):
        (ana, ana_id) = await member(url, "Ana")
        (bob, bob_id) = await member(url, "Bob", "127.0.0.2")
        a1, b1 = after_game(NEW, NEW, 1.0)
        room, _ = await rated_room(ana, "tictactoe", [HUMAN, HUMAN])
        await bob.request({"type": "join", "room_id": room, "seat": 1}, "room")
        await ana.expect("room")
        started = time.time()
        await play([ana, bob], room, X_WINS)
        for c in (ana, bob):
            final = await c.expect("room")
            assert final["status"] == "finished"
            change = final["rating_change"]
            assert [c["before"] for c in change] == [1500, 1500]
            assert change[0]["after"] == pytest.approx(a1[0], abs=1e-6)
            assert change[1]["after"] == pytest.approx(b1[0], abs=1e-6)
        ended = time.time()
        stored = await get(url, f"/api/rooms/{room}")
        assert stored["rating_change"] == final["rating_change"]

        # A casual game, drawn by agreement: in the tally, not in the rating's history.
        casual = (await ana.request({"type": "create_room", "game": "tictactoe",
                                     "options": {}, "seats": [HUMAN, HUMAN], "join_seat": 0},
                                    "room_created"))["room_id"]
        await bob.request({"type": "join", "room_id": casual, "seat": 1}, "room")
        await ana.request({"type": "offer_draw", "room_id": casual}, "draw_offer")
        await bob.request({"type": "accept_draw", "room_id": casual}, "room")
        casual_final = await get(url, f"/api/rooms/{casual}")
        assert casual_final["rating_change"] is None

        history = await get(url, f"/api/players/{ana_id}/history?game=tictactoe")
        assert history["game"] == "tictactoe"
        [point] = history["points"]
        assert point["rating"] == pytest.approx(a1[0], abs=1e-6)
        assert point["rd"] == pytest.approx(a1[1], abs=1e-6)
        assert started * 1000 - 1 <= point["at_ms"] <= ended * 1000 + 1
        assert (history["wins"], history["draws"], history["losses"]) == (1, 1, 0)
        bob_history = await get(url, f"/api/players/{bob_id}/history?game=tictactoe")
        assert (bob_history["wins"], bob_history["draws"], bob_history["losses"]) == (0, 1, 1)
        assert bob_history["points"][0]["rating"] == pytest.approx(b1[0], abs=1e-6)
        empty = await get(url, f"/api/players/{ana_id}/history?game=connect4")
        assert empty == {"game": "connect4", "points": [], "wins": 0, "draws": 0, "losses": 0}
        for path, status in ((f"/api/players/{ana_id}/history", 400),
                             (f"/api/players/{ana_id}/history?game=chess", 400),
                             ("/api/players/nobody/history?game=tictactoe", 404),
                             (f"/api/players/{ana_id}/history/x?game=tictactoe", 404)):
            code, body = await asyncio.to_thread(_get, url, path)
            assert code == status and "error" in body, (path, code, body)

    # After a restart the finished room, loaded from the store, shows its rating change.
    async with running(backend.where) as (_srv, url):
        (zoe,) = await connected(url, "Zoe")
        view = await zoe.request({"type": "spectate", "room_id": room}, "room")
        assert view["rating_change"] == final["rating_change"]


async def test_who_is_online(tmp_path: Path, backend: Backend) -> None:  # noqa: F811
    async with running(backend.where, max_msgs_per_address=None) as (_srv, url):
        (ana, ana_id) = await member(url, "Ana")
        (bob, bob_id) = await member(url, "Bob", "127.0.0.2")
        gus = Client(url)
        gus_id = (await gus.connect("Gus"))["player_id"]
        shown = await online(url)
        assert set(shown) == {ana_id, bob_id}  # a guest is not listed
        assert gus_id not in shown
        assert shown[ana_id] == {"player_id": ana_id, "name": "Ana", "ratings": {},
                                 "bot": False, "playing": False}
        room, _ = await rated_room(ana, "tictactoe", [HUMAN, HUMAN])
        await bob.request({"type": "join", "room_id": room, "seat": 1}, "room")
        shown = await online(url)
        assert shown[ana_id]["playing"] is True and shown[bob_id]["playing"] is True
        await play([ana, bob], room, X_WINS)
        shown = await online(url)
        assert shown[ana_id]["playing"] is False
        ratings = shown[ana_id]["ratings"]
        assert isinstance(ratings, dict) and ratings["tictactoe"]["games"] == 1
        await bob.close()
        for _ in range(50):  # the goodbye is handled once the socket closes
            if bob_id not in await online(url):
                break
            await asyncio.sleep(0.05)
        assert set(await online(url)) == {ana_id}
