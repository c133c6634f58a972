"""Every refusal code: an error answering the frame's id, nothing changed, connection open."""

from __future__ import annotations

import json
from pathlib import Path

from server_support import Client, connected, create, running
from tablas.server import views

HUMAN = {"kind": "human"}


async def test_refusals_in_a_game(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        a, b, s, x = Client(url), Client(url), Client(url), Client(url)
        await a.connect("Ana")
        await b.connect("Bo")
        await s.connect("Spec")
        await x.connect("Eve")
        room, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
        # a move before the game starts
        e = await a.error({"type": "move", "room_id": room, "ply": 0, "move": {"cell": 0}})
        assert e["code"] == "not_your_turn"
        await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
        await s.request({"type": "spectate", "room_id": room}, "room")
        e = await x.error({"type": "join", "room_id": room, "seat": 0})
        assert e["code"] == "seat_taken"
        e = await x.error({"type": "join", "room_id": room})
        assert e["code"] == "seat_taken"
        e = await b.error({"type": "move", "room_id": room, "ply": 0, "move": {"cell": 4}})
        assert e["code"] == "not_your_turn"
        e = await s.error({"type": "move", "room_id": room, "ply": 0, "move": {"cell": 4}})
        assert e["code"] == "not_seated"
        e = await x.error({"type": "move", "room_id": room, "ply": 0, "move": {"cell": 4}})
        assert e["code"] == "not_seated"
        e = await x.error({"type": "resign", "room_id": room})
        assert e["code"] == "not_seated"
        e = await a.error({"type": "move", "room_id": room, "ply": 0, "move": {"cell": 9}})
        assert e["code"] == "illegal_move"
        e = await a.error({"type": "move", "room_id": room, "ply": 0, "move": {"col": 1}})
        assert e["code"] == "illegal_move"
        e = await a.error({"type": "move", "room_id": room, "ply": 3, "move": {"cell": 4}})
        assert e["code"] == "stale"
        # the same move twice (a resend): applied once, the second is stale
        move = {"type": "move", "room_id": room, "ply": 0, "move": {"cell": 4}}
        u = await a.request(move, "update")
        assert u["ply"] == 1
        e = await a.error(move)
        assert e["code"] == "stale"
        e = await b.error({"type": "move", "room_id": room, "ply": 1, "move": {"cell": 4}})
        assert e["code"] == "illegal_move"
        snap = await s.request({"type": "spectate", "room_id": room}, "room")
        assert snap["ply"] == 1 and snap["history"] == [{"cell": 4}]
        e = await a.error({"type": "move", "room_id": "nope", "ply": 1, "move": {"cell": 0}})
        assert e["code"] == "unknown_room"
        for kind in ("join", "spectate", "leave", "resign", "rematch"):
            e = await a.error({"type": kind, "room_id": "nope"})
            assert e["code"] == "unknown_room", kind
        # finish by resigning: afterwards every move is game_over
        await a.request({"type": "resign", "room_id": room}, "room")
        e = await b.error({"type": "move", "room_id": room, "ply": 1, "move": {"cell": 0}})
        assert e["code"] == "game_over"


async def test_a_stale_ply_from_the_player_to_move_is_refused(tmp_path: Path) -> None:
    """The player whose turn it is sends a move with a ply one or two behind the room's, or
    ahead of it: each is ``stale`` and changes nothing, whatever the move (a legal one
    included); only the room's own ply is taken."""
    async with running(tmp_path / "t.db") as (_srv, url):
        a, b = await connected(url, "A", "B")
        room, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
        await b.request({"type": "join", "room_id": room, "seat": 1}, "room")
        await a.request({"type": "move", "room_id": room, "ply": 0, "move": {"cell": 4}},
                        "update")
        await b.request({"type": "move", "room_id": room, "ply": 1, "move": {"cell": 0}},
                        "update")
        for ply in (0, 1, 3, 4):  # the room is at ply 2, A to move; cell 8 is legal
            e = await a.error({"type": "move", "room_id": room, "ply": ply,
                               "move": {"cell": 8}})
            assert e["code"] == "stale", ply
        snap = await a.request({"type": "spectate", "room_id": room}, "room")
        assert snap["ply"] == 2 and snap["history"] == [{"cell": 4}, {"cell": 0}]
        u = await a.request({"type": "move", "room_id": room, "ply": 2, "move": {"cell": 8}},
                            "update")
        assert u["ply"] == 3


async def test_bad_frames(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_srv, url):
        c = Client(url)
        await c.open()
        # before hello
        e = await c.error({"type": "list_rooms"})
        assert e["code"] == "not_authenticated"
        e = await c.error({"type": "hello", "name": "Eve", "token": "no-such-token"})
        assert e["code"] == "not_authenticated"
        for bad_name in ["", "   ", "x" * 33, "a\u0000b", "tab\there"]:
            e = await c.error({"type": "hello", "name": bad_name, "token": None})
            assert e["code"] == "bad_request", bad_name
        e = await c.error({"type": "hello", "name": 5, "token": None})
        assert e["code"] == "bad_request"
        w = await c.request({"type": "hello", "name": "  Mal  ", "token": None}, "welcome")
        assert w["name"] == "Mal"
        e = await c.error({"type": "hello", "name": "Mal", "token": None})
        assert e["code"] == "bad_request"

        async def raw(frame: str) -> dict:
            await c.send_raw(frame)
            return await c.recv()

        assert (await raw("{not json"))["code"] == "bad_request"
        assert (await raw("[1, 2]"))["code"] == "bad_request"
        assert (await raw("[" * 60000))["code"] == "bad_request"
        deep = '{"id": 3, "type": "hello", "x": ' + "[" * 60000
        assert (await raw(deep))["code"] == "bad_request"
        await c.ws.send(b"\xff\xfe{")  # a binary frame that is not UTF-8 JSON
        assert (await c.recv())["code"] == "bad_request"
        assert (await raw(json.dumps({"id": 7})))["code"] == "bad_request"
        m = await raw(json.dumps({"type": "fly", "id": "abc"}))
        assert m["code"] == "unknown_type" and m["re"] == "abc"
        m = await raw(json.dumps({"type": "move", "room_id": 5, "id": 9}))
        assert m["code"] == "bad_request" and m["re"] == 9
        m = await raw(json.dumps({"type": "move", "room_id": "r", "ply": "1", "move": {}}))
        assert m["code"] == "bad_request"
        m = await raw(json.dumps({"type": "move", "room_id": "r", "ply": True, "move": {}}))
        assert m["code"] == "bad_request"
        m = await raw(json.dumps({"type": "list_rooms", "extra": 1}))
        assert m["code"] == "bad_request"
        e = await c.error({"type": "create_room", "game": "chess", "options": {},
                           "seats": [HUMAN, HUMAN]})
        assert e["code"] == "unknown_game"
        e = await c.error({"type": "create_room", "game": "grundy", "options": {"heap": "7"},
                           "seats": [HUMAN, HUMAN]})
        assert e["code"] == "bad_request"
        e = await c.error({"type": "create_room", "game": "grundy", "options": {},
                           "seats": [HUMAN]})
        assert e["code"] == "bad_request"
        e = await c.error({"type": "create_room", "game": "grundy", "options": {},
                           "seats": [HUMAN, {"kind": "bot", "level": "godlike"}]})
        assert e["code"] == "bad_request"
        e = await c.error({"type": "create_room", "game": "grundy", "options": {},
                           "seats": [HUMAN, {"kind": "bot"}], "join_seat": 1})
        assert e["code"] == "seat_taken"
        lobby = await c.request({"type": "list_rooms"}, "rooms")
        assert lobby["rooms"] == []  # nothing was created by the refusals
        # a frame over 64 KiB closes the connection (the contract allows it)
        await c.send_raw(json.dumps({"type": "chat", "room_id": "x", "text": "y" * 70000}))
        try:
            m = await c.recv(5)
            assert m.get("code") == "too_large"
        except Exception as exc:  # closed by the server
            assert "1009" in repr(exc) or "closed" in repr(exc).lower(), repr(exc)
        # the server is fine
        d = Client(url)
        await d.connect("Next")
        await d.close()


async def test_rate_limit(tmp_path: Path) -> None:
    """The default budget: 100 messages a second from one address, its handshake and
    ``hello`` included; past it ``rate_limited`` answers (with ``re``) and the connection
    stays open."""
    async with running(tmp_path / "t.db") as (_srv, url):
        c = Client(url)
        await c.connect("Fast")
        for _ in range(200):
            await c.send({"type": "list_rooms"})
        answers = [await c.recv() for _ in range(200)]
        codes = [m.get("code") for m in answers]
        assert 98 <= codes.count(None) < 150 and "rate_limited" in codes, codes
        assert [m["re"] for m in answers] == list(range(2, 202))
        # still connected
        await c.ws.ping()


async def test_a_change_whose_write_fails_changes_nothing(tmp_path: Path) -> None:
    """The room's owner persists before it commits: when the store refuses a seat taken, a
    move, a seat handed to a bot or a resignation, the player gets ``internal``, nobody hears
    of a change, the room in memory is as the disk has it, and the same command goes through
    once the store writes again."""
    async with running(tmp_path / "t.db") as (srv, url):
        a, b, s = Client(url), Client(url), Client(url)
        await a.connect("Ana")
        await b.connect("Bo")
        await s.connect("Spec")
        room, _ = await create(a, "tictactoe", [HUMAN, HUMAN])
        await s.request({"type": "spectate", "room_id": room}, "room")
        store = srv.store

        async def broken(*_a: object, **_k: object) -> None:
            raise OSError("disk on fire")

        async def refused(c: Client, name: str, msg: dict[str, object]) -> None:
            await s.request({"type": "spectate", "room_id": room}, "room")  # all read so far
            seen = len(s.inbox)
            before = views.snapshot(srv.hub.rooms[room].room, None).to_json()
            real = getattr(store, name)
            setattr(store, name, broken)
            try:
                e = await c.error(msg)
            finally:
                setattr(store, name, real)
            assert e["code"] == "internal", e
            assert views.snapshot(srv.hub.rooms[room].room, None).to_json() == before
            record = await store.load_room(room)
            assert record is not None
            assert views.snapshot(record.to_room(), None).to_json() == before  # the disk agrees
            await s.request({"type": "spectate", "room_id": room}, "room")
            assert not [m for m in s.inbox[seen:] if m["type"] == "update"]

        join = {"type": "join", "room_id": room, "seat": 1}
        await refused(b, "save_seats", join)
        started = await b.request(join, "room")
        assert started["status"] == "playing" and started["seats"][1]["name"] == "Bo"
        move = {"type": "move", "room_id": room, "ply": 0, "move": {"cell": 4}}
        await refused(a, "record_move", move)
        assert (await a.request(move, "update"))["ply"] == 1
        hand = {"type": "hand_to_bot", "room_id": room, "seat": 1, "level": "random"}
        await refused(b, "hand_seat_to_bot", hand)
        resign = {"type": "resign", "room_id": room}
        await refused(a, "record_result", resign)
        end = await a.request(resign, "room")
        assert end["status"] == "finished" and end["result"]["reason"] == "resign"
        for c in (a, b, s):
            await c.close()
