"""The sans-I/O room with an injected clock: chess clocks, flag falls, seats handed to bots."""

from __future__ import annotations

import pytest
from tablas.server import views
from tablas.server.bot_pool import budget_ms
from tablas.server.errors import RoomError
from tablas.server.protocol import ClockSpec, RoomOptions
from tablas.server.room import Action, BotJob, Flagged, Room, RoomRecord, SeatState


class FakeClock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


def _room(now: FakeClock, game: str = "tictactoe", **ropts: object) -> Room:
    room = Room("r1", game, {}, [SeatState("human"), SeatState("human")], clock=now,
                room_options=RoomOptions.model_validate(ropts))
    room.join("p0", "Ana", 0)
    room.join("p1", "Bo", 1)  # the last open seat: the game starts
    assert room.status == "playing"
    return room


def _play(room: Room, player: str, move: dict[str, int]) -> Action:
    return room.commit(room.prepare_move(player, room.ply, move))


def test_clock_runs_for_the_seat_to_move_and_earns_the_increment() -> None:
    clock = FakeClock()
    room = _room(clock, clock={"base_ms": 1000, "increment_ms": 100})
    snap = views.snapshot(room, "p0")
    assert snap.clocks == [1000, 1000] and snap.clock_running == 0
    assert snap.room_options.clock == ClockSpec(base_ms=1000, increment_ms=100)
    clock.advance(0.3)
    assert room.clocks.live() == [700, 1000]
    action = _play(room, "p0", {"cell": 4})
    assert action.clocks == (800, 1000)  # 1000 - 300 + 100
    u = views.update(room, action, "p1")
    assert u.clocks == [800, 1000] and u.clock_running == 1
    clock.advance(0.25)
    assert room.clocks.live() == [800, 750] and room.clocks.seconds_to_flag() == 0.75
    assert room.clocks.flag_fall() is None


def test_flag_fall_and_a_late_move() -> None:
    clock = FakeClock()
    room = _room(clock, clock={"base_ms": 500})
    _play(room, "p0", {"cell": 0})
    clock.advance(0.499)
    assert room.clocks.flag_fall() is None
    clock.advance(0.002)
    fell = room.clocks.flag_fall()
    assert fell is not None
    outcome, clocks = fell
    assert (outcome.winner, outcome.points, outcome.reason) == (0, 1, "timeout")
    assert clocks == [500, 0]
    with pytest.raises(Flagged) as e:  # a move after the flag fell is refused, game over
        room.prepare_move("p1", room.ply, {"cell": 1})
    assert e.value.code == "game_over" and e.value.outcome == outcome
    assert room.ply == 1  # unchanged
    room.finish(e.value.outcome, e.value.clocks)
    snap = views.snapshot(room, None)
    assert snap.status == "finished" and snap.result is not None
    assert snap.result.reason == "timeout" and snap.clocks == [500, 0]
    assert snap.clock_running is None
    clock.advance(10)
    assert room.clocks.live() == [500, 0]  # stopped


def test_no_clock_by_default() -> None:
    clock = FakeClock()
    room = _room(clock)
    clock.advance(1e6)
    assert room.clocks.live() is None and room.clocks.flag_fall() is None
    assert room.clocks.seconds_to_flag() is None and room.presence.seconds_to_abandon() is None
    action = _play(room, "p0", {"cell": 0})
    assert action.clocks is None and views.update(room, action, None).clocks is None


def test_backgammon_timeout_is_worth_the_cube() -> None:
    clock = FakeClock()
    room = _room(clock, "backgammon", clock={"base_ms": 100})
    clock.advance(1)
    fell = room.clocks.flag_fall()
    assert fell is not None and fell[0].reason == "timeout"
    assert fell[0].points == room.state.cube == 1
    assert fell[0].winner == 1 - room.to_move


def test_restore_resumes_the_clocks_from_the_last_move() -> None:
    clock = FakeClock()
    room = _room(clock, "connect4", clock={"base_ms": 60_000, "increment_ms": 1000})
    for player, col in [("p0", 3), ("p1", 3), ("p0", 4)]:
        clock.advance(2)
        _play(room, player, {"column": col})
    assert room.clocks.remaining == [58_000, 59_000]
    clock.advance(1000)  # the server was down for a while
    record = RoomRecord(room.room_id, "connect4", {}, "playing", None, room.created_at,
                        [SeatState("human", None, "p0", "Ana"), SeatState("human", None, "p1")],
                        actions=list(room.history), room_options=room.room_options)
    again = record.to_room(clock)
    assert again.clocks.live() == [58_000, 59_000] and again.clocks.running == 1
    clock.advance(0.5)
    assert again.clocks.live() == [58_000, 58_500]


def test_bot_job_carries_the_bots_clock_and_budget_is_capped() -> None:
    clock = FakeClock()
    room = Room("r2", "connect4", {}, [SeatState("bot", "hard"), SeatState("bot", "hard")],
                clock=clock, room_options=RoomOptions(clock=ClockSpec(base_ms=3000)))
    room.start()
    clock.advance(1)
    job = BotJob.of(room)
    assert job is not None and job.time_left_ms == 2000
    assert budget_ms(job) == 200  # a tenth of the time left, below the level's 2000 ms
    assert BotJob.of(Room("r3", "connect4", {}, [SeatState("bot", "hard")] * 2)) is None


def test_abandoned_seat_after_the_delay_and_back_in_time() -> None:
    clock = FakeClock()
    room = _room(clock, "connect4", abandon_to_bot_after_ms=5000)
    online = {"p0", "p1"}
    room.presence.sync(online.__contains__)
    assert room.presence.seconds_to_abandon() is None and room.presence.abandoned() == []
    online.discard("p1")
    room.presence.sync(online.__contains__)
    clock.advance(3)
    room.presence.sync(online.__contains__)  # still away: the delay counts from the start
    assert room.presence.seconds_to_abandon() == pytest.approx(2)
    assert room.presence.abandoned() == []
    online.add("p1")  # back in time
    room.presence.sync(online.__contains__)
    assert room.presence.seconds_to_abandon() is None
    online.discard("p1")
    room.presence.sync(online.__contains__)
    clock.advance(4.999)
    assert room.presence.abandoned() == []
    clock.advance(0.001)
    assert room.presence.abandoned() == [1]
    room.hand_to_bot(1, "medium")
    assert room.seats[1] == SeatState("bot", "medium", stands_for="Bo")
    assert room.presence.abandoned() == []
    assert room.bot_to_move() is None and room.seats_of("p1") == []
    _play(room, "p0", {"column": 3})
    assert room.bot_to_move() == 1


def test_hand_to_bot_only_by_the_holder_and_not_after_the_end() -> None:
    clock = FakeClock()
    room = _room(clock)
    with pytest.raises(RoomError) as e:
        room.seating.check_hand_to_bot("p0", 1)
    assert e.value.code == "not_seated"
    with pytest.raises(RoomError) as e:
        room.seating.check_hand_to_bot(None, 0)
    assert e.value.code == "not_seated"
    room.seating.check_hand_to_bot("p1", 1)
    room.finish(room.endings.prepare_resign("p0"))
    with pytest.raises(RoomError) as e:
        room.seating.check_hand_to_bot("p1", 1)
    assert e.value.code == "game_over"


def test_hand_to_bot_in_a_waiting_room_starts_the_game() -> None:
    room = Room("r4", "tictactoe", {}, [SeatState("human"), SeatState("human")],
                clock=FakeClock())
    room.join("p0", "Ana", 0)
    room.hand_to_bot(1, "easy")
    assert room.status == "playing" and room.seats[1].kind == "bot"
