"""Rated games over a real socket (contract sections 8 and 10): a rated room's end moves both
sides' Glicko-2 ratings by exactly one period, as Glickman's paper computes it (an
implementation of the paper's steps written here, independently of server/ratings.py);
resignations and abandonments after each side has moved are losses; house bot levels are
anchors whose fixed rating games never change; guests cannot sit in rated rooms; the
leaderboard and the players' pages; the rating is written with the result."""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from server_support import Client, http_base, running
from tablas.engine.core import Outcome
from tablas.engine.games import GAME_IDS
from tablas.engine.search.profiles import PROFILES
from tablas.server.ratings import Rating, RatingChange

PASSWORD = "correct horse battery"
HUMAN = {"kind": "human"}
X_WINS = [0, 3, 1, 4, 2]  # tic-tac-toe: seat 0 (X) completes the top row
SCALE = 173.7178
CLOCK = {"base_ms": 600_000, "increment_ms": 0}  # a rated game has a clock (section 10)


def glicko2(r: float, rd: float, sigma: float, opp_r: float, opp_rd: float, s: float,
            tau: float = 0.5) -> tuple[float, float, float]:
    """One rating period with one game, the steps of Glickman's "Example of the Glicko-2
    system", with the server's one documented choice: the pre-period RD is capped at 350."""
    mu, phi = (r - 1500) / SCALE, rd / SCALE
    mu_j, phi_j = (opp_r - 1500) / SCALE, opp_rd / SCALE
    g = 1 / math.sqrt(1 + 3 * phi_j ** 2 / math.pi ** 2)
    e = 1 / (1 + math.exp(-g * (mu - mu_j)))
    v = 1 / (g * g * e * (1 - e))
    delta = v * g * (s - e)
    a = math.log(sigma ** 2)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta ** 2 - phi ** 2 - v - ex) / (2 * (phi ** 2 + v + ex) ** 2) \
            - (x - a) / tau ** 2

    big_a = a
    if delta ** 2 > phi ** 2 + v:
        big_b = math.log(delta ** 2 - phi ** 2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > 0.000001:
        c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2
        big_b, f_b = c, f_c
    sigma_new = math.exp(big_a / 2)
    phi_star = min(math.sqrt(phi ** 2 + sigma_new ** 2), 350 / SCALE)
    phi_new = 1 / math.sqrt(1 / phi_star ** 2 + 1 / v)
    mu_new = mu + phi_new ** 2 * g * (s - e)
    return SCALE * mu_new + 1500, SCALE * phi_new, sigma_new


NEW = (1500.0, 350.0, 0.06)


def anchor(game: str, level: str) -> tuple[float, float, float]:
    """A house bot level's fixed rating and RD (the project's, from its measured play)."""
    rating, rd = PROFILES[game].bot_ratings[level]  # type: ignore[index]
    return float(rating), float(rd), 0.06


def after_game(a: tuple[float, float, float], b: tuple[float, float, float], score_a: float
               ) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    return (glicko2(*a, b[0], b[1], score_a), glicko2(*b, a[0], a[1], 1 - score_a))


def _get(url: str, path: str) -> tuple[int, Any]:
    base = http_base(url)
    try:
        with urllib.request.urlopen(base + path, timeout=30) as r:
            assert r.headers["Content-Type"] == "application/json"
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        assert e.headers["Content-Type"] == "application/json"
        return e.code, json.loads(e.read())


def _get_text(url: str, path: str) -> tuple[int, str]:
    base = http_base(url)
    with urllib.request.urlopen(base + path, timeout=30) as r:
        assert r.headers["Content-Type"].startswith("text/html")
        return r.status, r.read().decode()


async def get(url: str, path: str, status: int = 200) -> Any:
    code, body = await asyncio.to_thread(_get, url, path)
    assert code == status, (path, code, body)
    return body


async def member(url: str, name: str) -> tuple[Client, str]:
    c = Client(url)
    pid = (await c.connect(name))["player_id"]
    await c.request({"type": "register", "password": PASSWORD}, "registered")
    return c, pid


async def rated_room(c: Client, game: str, seats: list[dict[str, Any]], **kw: Any
                     ) -> tuple[str, dict[str, Any]]:
    created = await c.request({"type": "create_room", "game": game, "options": {},
                               "seats": seats, "join_seat": 0, "rated": True, "clock": CLOCK,
                               **kw}, "room_created")
    return created["room_id"], await c.expect("room")


async def first_moves(c: Client, room: str, view: dict[str, Any]) -> dict[str, Any]:
    """``c`` plays its seat's first listed move against a bot until each seat has moved
    (a rated game ended earlier is aborted, not rated); the latest view."""
    while view["ply"] < 2:
        if view.get("legal_moves"):
            view = await c.request({"type": "move", "room_id": room, "ply": view["ply"],
                                    "move": view["legal_moves"][0]}, "update")
        else:
            view = await c.expect("update")
    return view


async def play(movers: list[Client], room: str, cells: list[int]) -> dict[str, Any]:
    """Plays ``cells`` in turn from ply 0 (movers[0] first); the last mover's update."""
    view: dict[str, Any] = {}
    for ply, cell in enumerate(cells):
        view = await movers[ply % 2].request({"type": "move", "room_id": room, "ply": ply,
                                              "move": {"cell": cell}}, "update")
    return view


def close_to(shown: dict[str, Any], expected: tuple[float, float, float], games: int) -> None:
    assert shown["games"] == games
    assert shown["rating"] == pytest.approx(expected[0], abs=1e-6)
    assert shown["rd"] == pytest.approx(expected[1], abs=1e-6)


async def test_rated_games_between_members_move_ratings_as_glicko2_says(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        (ana, ana_id), (bob, bob_id) = await member(url, "Ana"), await member(url, "Bob")
        room, snap = await rated_room(ana, "tictactoe", [HUMAN, HUMAN])
        assert snap["rated"] is True and snap["room_options"]["rated"] is True
        assert snap["seats"][0]["rating"] == 1500
        snap = await bob.request({"type": "join", "room_id": room, "seat": 1}, "room")
        assert [s["rating"] for s in snap["seats"]] == [1500, 1500]
        lobby = await get(url, "/api/rooms")
        summary = next(r for r in lobby["rooms"] if r["room_id"] == room)
        assert summary["rated"] is True and [s["rating"] for s in summary["seats"]] == [1500,
                                                                                         1500]
        await play([ana, bob], room, X_WINS)
        final = await ana.expect("room")
        assert final["status"] == "finished" and final["result"]["winner"] == 0
        a1, b1 = after_game(NEW, NEW, 1.0)
        # The paper's numbers for one game between new players (docs/ratings.md).
        assert round(a1[0], 2) == 1662.21 and round(b1[0], 2) == 1337.79
        assert round(a1[1], 2) == round(b1[1], 2) == 290.23
        assert [s["rating"] for s in final["seats"]] == [round(a1[0]), round(b1[0])]
        close_to((await get(url, f"/api/players/{ana_id}"))["ratings"]["tictactoe"], a1, 1)
        close_to((await get(url, f"/api/players/{bob_id}"))["ratings"]["tictactoe"], b1, 1)

        # A rematch is rated too (the option is kept); this time Bob, now X, wins.
        await ana.request({"type": "rematch", "room_id": room}, "room_created")
        offer = await bob.expect("rematch_offer")
        second = offer["new_room_id"]
        snap = await bob.request({"type": "join", "room_id": second, "seat": 0}, "room")
        assert snap["rated"] and [s["rating"] for s in snap["seats"]] == [round(b1[0]),
                                                                          round(a1[0])]
        await play([bob, ana], second, X_WINS)
        b2, a2 = after_game(b1, a1, 1.0)
        ana_page = await get(url, f"/api/players/{ana_id}")
        close_to(ana_page["ratings"]["tictactoe"], a2, 2)
        close_to((await get(url, f"/api/players/{bob_id}"))["ratings"]["tictactoe"], b2, 2)
        assert ana_page["name"] == "Ana" and ana_page["registered"] is True
        assert [g["room_id"] for g in ana_page["games"]] == [second, room]
        assert all(g["rated"] and g["status"] == "finished" for g in ana_page["games"])
        # Both won by seat 0: Bob in the rematch, Ana in the first game.
        assert [g["result"]["winner"] for g in ana_page["games"]] == [0, 0]
        assert [s["player_id"] for s in ana_page["games"][0]["seats"]] == [bob_id, ana_id]
        board = await get(url, "/api/leaderboard?game=tictactoe")
        assert board["game"] == "tictactoe"
        people = [p for p in board["players"] if not p["bot"]]
        assert [p["player_id"] for p in people] == sorted(
            [ana_id, bob_id], key=lambda p: -(a2 if p == ana_id else b2)[0])
        # Best first, the house levels among them at their fixed ratings.
        assert [p["rating"] for p in board["players"]] == sorted(
            (p["rating"] for p in board["players"]), reverse=True)
        assert all(p["player_id"].startswith("bot:tictactoe:") for p in board["players"]
                   if p["bot"])
        for c in (ana, bob):
            await c.close()


async def test_resigning_to_a_bot_is_a_loss_and_bots_are_rated_players(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, ana_id = await member(url, "Ana")
        bot = {"kind": "bot", "level": "random"}
        fixed = anchor("connect4", "random")
        room, snap = await rated_room(ana, "connect4", [HUMAN, bot])
        assert [s["rating"] for s in snap["seats"]] == [1500, round(fixed[0])]
        await first_moves(ana, room, snap)
        await ana.request({"type": "resign", "room_id": room}, "room")
        a1, _ = after_game(NEW, fixed, 0.0)
        close_to((await get(url, f"/api/players/{ana_id}"))["ratings"]["connect4"], a1, 1)
        bot_page = await get(url, "/api/players/bot:connect4:random")
        assert bot_page["bot"] is True and bot_page["name"] == "bot (random)"
        # The anchor did not move; the game counts.
        close_to(bot_page["ratings"]["connect4"], fixed, 1)
        board = await get(url, "/api/leaderboard?game=connect4")
        rows = {p["player_id"]: (p["name"], p["bot"], p["rating"], p["rd"])
                for p in board["players"]}
        assert rows[ana_id] == ("Ana", False, pytest.approx(a1[0]), pytest.approx(a1[1]))
        # Every house level of the game is on the board, at its fixed rating and RD.
        for level in ("random", "easy", "medium", "hard", "max"):
            r, rd, _ = anchor("connect4", level)
            assert rows[f"bot:connect4:{level}"] == (f"bot ({level})", True, r, rd)
        assert len(rows) == 6
        # A second rated game against the same bot level: the bot is where it was.
        room2, snap2 = await _rated_second(ana)
        assert snap2["seats"][0]["rating"] == round(fixed[0])
        assert snap2["seats"][1]["rating"] == round(a1[0])
        await first_moves(ana, room2, snap2)
        await ana.request({"type": "resign", "room_id": room2}, "room")
        _, a2 = after_game(fixed, a1, 1.0)
        close_to((await get(url, f"/api/players/{ana_id}"))["ratings"]["connect4"], a2, 2)
        close_to((await get(url, "/api/players/bot:connect4:random"))["ratings"]["connect4"],
                 fixed, 2)
        await ana.close()


async def _rated_second(ana: Client) -> tuple[str, dict[str, Any]]:
    """Ana in seat 1 against the random bot in seat 0."""
    created = await ana.request({"type": "create_room", "game": "connect4", "options": {},
                                 "seats": [{"kind": "bot", "level": "random"}, HUMAN],
                                 "join_seat": 1, "rated": True, "clock": CLOCK},
                                "room_created")
    return created["room_id"], await ana.expect("room")


async def test_an_abandoned_rated_game_is_a_loss(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db", abandon_after=0.3) as (_, url):
        (ana, ana_id), (bob, bob_id) = await member(url, "Ana"), await member(url, "Bob")
        room, _ = await rated_room(ana, "tictactoe", [HUMAN, HUMAN])
        await bob.request({"type": "join", "room_id": room, "seat": 1}, "room")
        await play([ana, bob], room, [4, 0])  # each side has moved: not an abort
        await bob.close()
        while True:
            snap = await ana.expect("room", timeout=10)
            if snap["status"] == "finished":
                break
        assert snap["result"] == {"winner": 0, "points": 1, "reason": "abandoned"}
        a1, b1 = after_game(NEW, NEW, 1.0)
        close_to((await get(url, f"/api/players/{ana_id}"))["ratings"]["tictactoe"], a1, 1)
        close_to((await get(url, f"/api/players/{bob_id}"))["ratings"]["tictactoe"], b1, 1)
        await ana.close()


async def test_who_may_play_rated(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, _ = await member(url, "Ana")
        guest = Client(url)
        await guest.connect("Guest")
        bot = {"kind": "bot", "level": "random"}
        msg = {"type": "create_room", "game": "tictactoe", "options": {}, "rated": True,
               "clock": CLOCK}
        e = await guest.error({**msg, "seats": [HUMAN, bot], "join_seat": 0})
        assert e["code"] == "not_authenticated" and "regist" in e["message"]
        e = await guest.error({**msg, "seats": [HUMAN, HUMAN]})
        assert e["code"] == "not_authenticated"
        assert (await ana.error({**msg, "seats": [bot, bot]}))["code"] == "bad_request"
        assert (await ana.error({**msg, "seats": [HUMAN, bot], "join_seat": 0,
                                 "abandon_to_bot_after_ms": 1000}))["code"] == "bad_request"
        room, _ = await rated_room(ana, "tictactoe", [HUMAN, HUMAN])
        e = await guest.error({"type": "join", "room_id": room})
        assert e["code"] == "not_authenticated" and "regist" in e["message"]
        # One person does not play both sides of a rated game.
        assert (await ana.error({"type": "join", "room_id": room, "seat": 1}))["code"] == \
            "bad_request"
        # The guest changed nothing: the seat is still open, and a guest may watch.
        snap = await guest.request({"type": "spectate", "room_id": room}, "room")
        assert snap["seats"][1]["player_id"] is None and snap["status"] == "waiting"
        # Once registered, the same connection may sit.
        await guest.request({"type": "register", "password": PASSWORD}, "registered")
        snap = await guest.request({"type": "join", "room_id": room}, "room")
        assert snap["status"] == "playing"
        e = await ana.error({"type": "hand_to_bot", "room_id": room, "seat": 0})
        assert e["code"] == "bad_request"
        for c in (ana, guest):
            await c.close()


async def test_two_rated_games_of_one_player_ending_together(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        ana, ana_id = await member(url, "Ana")
        other = Client(url)
        await other.open()
        await other.request({"type": "hello", "name": "Ana", "password": PASSWORD}, "welcome")
        rooms = []
        for c, level in ((ana, "random"), (other, "easy")):
            room, snap = await rated_room(c, "tictactoe",
                                          [HUMAN, {"kind": "bot", "level": level}])
            await first_moves(c, room, snap)
            rooms.append(room)
        await asyncio.gather(ana.request({"type": "resign", "room_id": rooms[0]}, "room"),
                             other.request({"type": "resign", "room_id": rooms[1]}, "room"))
        shown = (await get(url, f"/api/players/{ana_id}"))["ratings"]["tictactoe"]
        # One after the other, in either order: never both from the same rating.
        random, easy = anchor("tictactoe", "random"), anchor("tictactoe", "easy")
        orders = [after_game(after_game(NEW, random, 0.0)[0], easy, 0.0)[0],
                  after_game(after_game(NEW, easy, 0.0)[0], random, 0.0)[0]]
        assert shown["games"] == 2
        assert any(shown["rating"] == pytest.approx(o[0], abs=1e-6) for o in orders)
        for level in ("random", "easy"):
            page = await get(url, f"/api/players/bot:tictactoe:{level}")
            assert page["ratings"]["tictactoe"]["games"] == 1
        for c in (ana, other):
            await c.close()


async def test_rating_is_written_with_the_result_or_not_at_all(tmp_path: Path) -> None:
    """The result and the rating change are one write: a rating change the store refuses
    (computed from a stale rating) leaves no result either; a good one leaves both."""
    db = tmp_path / "t.db"
    async with running(db) as (srv, url):
        ana, ana_id = await member(url, "Ana")
        room, snap = await rated_room(ana, "tictactoe",
                                      [HUMAN, {"kind": "bot", "level": "random"}])
        await first_moves(ana, room, snap)
        stale = Rating(1600.0, 200.0, 0.06, 5)  # as if Ana had played 4 games before
        with pytest.raises(sqlite3.IntegrityError):
            await srv.store.record_result(
                room, Outcome(1, 1, "resign"), ratings=[
                    RatingChange(0, ana_id, "tictactoe", 0.0, Rating(), stale)])
        with sqlite3.connect(db) as con:
            assert con.execute("SELECT COUNT(*) FROM results WHERE room_id = ?",
                               (room,)).fetchone() == (0,)
            assert con.execute("SELECT COUNT(*) FROM ratings WHERE player_id NOT LIKE 'bot:%'"
                               ).fetchone() == (0,)
        await ana.request({"type": "resign", "room_id": room}, "room")
        with sqlite3.connect(db) as con:
            assert con.execute("SELECT winner FROM results WHERE room_id = ?",
                               (room,)).fetchone() == (1,)
            changes = con.execute(
                "SELECT seat, player_id, score FROM rating_changes WHERE room_id = ?"
                " ORDER BY seat", (room,)).fetchall()
        assert changes == [(0, ana_id, 0.0), (1, "bot:tictactoe:random", 1.0)]
        await ana.close()
    # After a restart the ratings are there, and a rated room shows them in its seats.
    async with running(db) as (_, url):
        a1, _ = after_game(NEW, anchor("tictactoe", "random"), 0.0)
        close_to((await get(url, f"/api/players/{ana_id}"))["ratings"]["tictactoe"], a1, 1)
        snap = await get(url, f"/api/rooms/{room}")
        assert snap["rated"] is True


async def test_leaderboard_and_player_refusals(tmp_path: Path) -> None:
    async with running(tmp_path / "t.db") as (_, url):
        every = await get(url, "/api/leaderboard")  # without a game: every game's
        assert [b["game"] for b in every["games"]] == list(GAME_IDS)
        assert all(b["players"] for b in every["games"])  # the house levels at least
        for path, status in (("/api/leaderboard?game=", 400), ("/api/leaderboard?game=chess", 400),
                             ("/api/leaderboard?game=tictactoe&game=grundy", 400),
                             ("/api/players/nobody", 404), ("/api/players/bot:chess:max", 404),
                             ("/api/players/bot:tictactoe:nope", 404),
                             ("/api/players/a/b", 404)):
            body = await get(url, path, status)
            assert isinstance(body["error"], str) and body["error"]
        guest = Client(url)
        gid = (await guest.connect("Guest"))["player_id"]
        page = await get(url, f"/api/players/{gid}")
        assert page == {"player_id": gid, "name": "Guest", "registered": False, "bot": False,
                        "ratings": {}, "games": []}
        # A bot level never played is a rated player at its fixed rating.
        bot = await get(url, "/api/players/bot:tictactoe:max")
        r, rd, _ = anchor("tictactoe", "max")
        assert bot == {"player_id": "bot:tictactoe:max", "name": "bot (max)", "registered": False,
                       "bot": True, "ratings": {"tictactoe": {"rating": r, "rd": rd, "games": 0}},
                       "games": []}
        # The pages are served for any id; they ask the API themselves.
        for path in ("/leaderboard", f"/players/{gid}"):
            status, _ = await asyncio.to_thread(_get_text, url, path)
            assert status == 200
        await guest.close()


async def test_a_rating_anyone_saw_survives_kill9(tmp_path: Path) -> None:
    """A real ``tablas serve``: the final snapshot of a rated game carries the new ratings,
    and it is sent only once they are on disk: killed at once (SIGKILL), the server comes back
    with them."""
    from server_support import Subprocess

    srv = Subprocess(tmp_path / "t.db", tmp_path / "server.log", workers=1)
    srv.start()
    try:
        ana, ana_id = await member(srv.url, "Ana")
        room, snap = await rated_room(ana, "grundy",
                                      [HUMAN, {"kind": "bot", "level": "random"}])
        await first_moves(ana, room, snap)
        final = await ana.request({"type": "resign", "room_id": room}, "room")
        seen = [s["rating"] for s in final["seats"]]
        srv.kill9()
        await ana.close()
        srv.start()
        page = await get(srv.url, f"/api/players/{ana_id}")
        fixed = anchor("grundy", "random")
        a1, _ = after_game(NEW, fixed, 0.0)
        assert round(page["ratings"]["grundy"]["rating"]) == seen[0] == round(a1[0])
        bot = await get(srv.url, "/api/players/bot:grundy:random")
        assert round(bot["ratings"]["grundy"]["rating"]) == seen[1] == round(fixed[0])
        assert bot["ratings"]["grundy"]["games"] == 1
        # And the player logs in again after the restart, from a new connection.
        again = Client(srv.url)
        await again.open()
        w = await again.request({"type": "hello", "name": "ana", "password": PASSWORD},
                                "welcome")
        assert w["player_id"] == ana_id and w["registered"] is True
        await again.close()
    finally:
        srv.terminate()
