"""Full games over a real WebSocket on an ephemeral port, with a real SQLite file."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from server_support import Client, create, play_vs_bot, running
from tablas.engine.games import GAME_IDS

HUMAN = {"kind": "human"}


async def test_tictactoe_people_and_spectator(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (srv, url):
        srv.lobby.max_age = 0  # the lobby is read right after each change
        a, b, s = Client(url), Client(url), Client(url)
        wa = await a.connect("Ana")
        wb = await b.connect("Bo")
        await s.connect("Spec")
        assert wa["player_id"] != wb["player_id"] and wa["token"] != wb["token"]
        room, snap = await create(a, "tictactoe", [HUMAN, HUMAN])
        assert snap["status"] == "waiting" and snap["ply"] == 0 and snap["history"] == []
        assert snap["seats"][0]["name"] == "Ana" and snap["seats"][1]["name"] is None
        joined = await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
        assert joined["status"] == "playing" and joined["to_move"] == 0
        assert joined["legal_moves"] == []  # seat 1 is not to move
        fresh = await a.expect("room")  # the seat was taken: everyone gets a snapshot
        assert fresh["status"] == "playing" and len(fresh["legal_moves"]) == 9
        assert [x["connected"] for x in fresh["seats"]] == [True, True]
        watched = await s.request({"type": "spectate", "room_id": room}, "room")
        assert watched["legal_moves"] == [] and watched["spectators"] == 1
        lobby = await s.request({"type": "list_rooms"}, "rooms")
        mine = [r for r in lobby["rooms"] if r["room_id"] == room]
        assert mine and mine[0]["status"] == "playing" and mine[0]["spectators"] == 1
        assert set(mine[0]["seats"][0]) == {"seat", "kind", "name", "level", "player_id",
                                              "rating", "bot"}
        assert mine[0]["room_options"]["clock"] is None
        rng = random.Random(1)
        views = {0: fresh, 1: joined}
        players = {0: a, 1: b}
        spec_seen = []
        sent = []
        while views[0]["status"] != "finished":
            seat = views[0]["to_move"]
            assert views[1 - seat]["legal_moves"] == []
            mv = rng.choice(views[seat]["legal_moves"])
            sent.append(mv)
            rid = await players[seat].send(
                {"type": "move", "room_id": room, "ply": views[seat]["ply"], "move": mv})
            views = {0: await a.expect("update"), 1: await b.expect("update")}
            assert views[seat]["re"] == rid and "re" not in views[1 - seat]
            u = await s.expect("update")
            assert u["legal_moves"] == [] and u["move"] == mv
            spec_seen.append(u["ply"])
        assert spec_seen == list(range(1, len(sent) + 1))
        final = await s.expect("room")  # the end of the game: a fresh snapshot
        assert final["status"] == "finished" and final["result"] == views[0]["result"]
        assert final["history"] == sent and final["ply"] == len(sent)
        lobby = await s.request({"type": "list_rooms"}, "rooms")
        assert room not in [r["room_id"] for r in lobby["rooms"]]  # only live rooms listed
        for c in (a, b, s):
            await c.close()


async def _room_with(c: Client, connected: list[bool]) -> None:
    """Waits for a ``room`` snapshot whose seats' ``connected`` flags are ``connected``
    (earlier snapshots, of the join say, are skipped)."""
    while [x["connected"] for x in (await c.expect("room", timeout=5))["seats"]] != connected:
        pass


async def test_a_player_going_away_and_coming_back_is_seen_by_the_room(tmp_path: Path) -> None:
    """Presence: when a seated player's last connection goes, and when the player says
    ``hello`` again with the token, the others in the room get a fresh ``room`` with the
    ``connected`` flag; the returning player's ``welcome`` lists the seat, and going away
    again is seen too, though that connection never named the room."""
    async with running(tmp_path / "t.db") as (_srv, url):
        a, b, s = Client(url), Client(url), Client(url)
        await a.connect("Ana")
        token = (await b.connect("Bo"))["token"]
        await s.connect("Spec")
        room, _ = await create(a, "connect4", [HUMAN, HUMAN])
        await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
        await s.request({"type": "spectate", "room_id": room}, "room")
        await b.close()
        for c in (a, s):
            await _room_with(c, connected=[True, False])
        b = Client(url)
        welcome = await b.connect("Bo", token)
        assert welcome["seats"] == [{"room_id": room, "seat": 1, "status": "playing"}]
        for c in (a, s):
            await _room_with(c, connected=[True, True])
        await b.close()  # away again, without having named the room this time
        for c in (a, s):
            await _room_with(c, connected=[True, False])
        for c in (a, s):
            await c.close()


async def test_person_against_bot(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        a = Client(url)
        await a.connect("Ana")
        room, snap = await create(a, "tictactoe", [{"kind": "bot", "level": "easy"}, HUMAN],
                                  join_seat=1)
        assert snap["status"] == "playing"
        assert snap["seats"][0] == {"seat": 0, "kind": "bot", "name": "bot (easy)",
                                    "level": "easy", "connected": True, "player_id": None,
                                    "rating": None, "bot": False}
        end = await play_vs_bot(a, room, snap, seat=1)
        assert end["result"] is not None
        again = await a.request({"type": "join", "room_id": room}, "room")
        assert len(again["history"]) == again["ply"] == end["ply"]


@pytest.mark.parametrize("game", GAME_IDS)
async def test_bot_against_bot(tmp_path: Path, game: str) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        a = Client(url)
        await a.connect("Watcher")
        level = "random" if game in ("backgammon", "boom") else "easy"
        bot = {"kind": "bot", "level": level}
        _room, view = await create(a, game, [bot, bot], join_seat=None)
        assert view["status"] in ("playing", "finished") and view["spectators"] == 1
        plies = []
        while view["status"] != "finished":
            view = await a.expect("update", timeout=60)
            plies.append(view["ply"])
        assert plies == list(range(plies[0], plies[-1] + 1))
        final = await a.expect("room")
        assert final["status"] == "finished" and len(final["history"]) == final["ply"]
        if game == "backgammon":
            assert final["dice_seed"] and final["dice_commitment"] and final["rolls"]


async def test_backgammon_against_bot_with_reordered_play(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", max_msgs_per_address=None) as (_srv, url):
        a = Client(url)
        await a.connect("Bea")
        room, view = await create(a, "backgammon", [HUMAN, {"kind": "bot", "level": "random"}])
        assert view["rolls"][0]["ply"] == 0 and len(view["rolls"][0]["dice"]) == 2
        assert len(view["state"]["notation"]) == 14 and view["dice_commitment"]
        reordered = 0
        for _ in range(400):
            if view["status"] == "finished":
                break
            if view["to_move"] == 0 and view["legal_moves"]:
                moves = view["legal_moves"]
                pick = moves[0]
                steps = pick.get("play") or []
                # Send a play with its steps reversed when that is not listed itself.
                listed = {str(m) for m in moves}
                rev = {"play": list(reversed(steps))}
                if len(steps) == 2 and str(rev) not in listed and steps[0][1] != steps[1][0]:
                    sent = rev
                else:
                    sent = pick
                rid = await a.send({"type": "move", "room_id": room, "ply": view["ply"],
                                    "move": sent})
                while True:
                    m = await a.recv(60)
                    if m.get("re") == rid or (m["type"] == "update" and m["seat"] == 0):
                        break
                if m["type"] == "error":  # a reversed order that is not the same play
                    assert m["code"] == "illegal_move", m
                    await a.send({"type": "move", "room_id": room, "ply": view["ply"],
                                  "move": pick})
                    m = await a.expect("update", timeout=60)
                elif sent is not pick:
                    assert m["move"] in moves  # history keeps the listed form
                    reordered += 1
                if m["move"] == {"action": "roll"}:
                    assert m["dice"] and len(m["dice"]) == 2
                view = m
            else:
                view = await a.expect("update", timeout=60)
            if view["status"] == "finished":
                break
        snap = await a.request({"type": "join", "room_id": room, "seat": 0}, "room")
        assert len(snap["history"]) == snap["ply"]
        assert reordered > 0


async def test_resign_and_rematch(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        a = Client(url)
        await a.connect("Ana")
        room, snap = await create(a, "connect4", [HUMAN, {"kind": "bot", "level": "random"}])
        snap = await a.request({"type": "resign", "room_id": room}, "room")
        assert snap["status"] == "finished"
        assert snap["result"] == {"winner": 1, "points": 1, "reason": "resign"}
        e = await a.error({"type": "resign", "room_id": room})
        assert e["code"] == "game_over"
        created = await a.request({"type": "rematch", "room_id": room}, "room_created")
        snap2 = await a.expect("room")
        assert snap2["room_id"] == created["room_id"] != room
        assert snap2["seats"][0]["kind"] == "bot" and snap2["seats"][1]["name"] == "Ana"


async def test_chat_and_leave(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        a, b = Client(url), Client(url)
        await a.connect("Ana")
        await b.connect("Bo")
        room, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
        await b.request({"type": "spectate", "room_id": room}, "room")
        await a.send({"type": "chat", "room_id": room, "text": " hi "})
        line = await b.expect("chat")
        assert line["text"] == "hi" and line["name"] == "Ana"
        left = await a.request({"type": "leave", "room_id": room}, "left")
        assert left["room_id"] == room
        snap = await b.expect("room")  # the seat was freed while waiting
        assert snap["seats"][0]["name"] is None
