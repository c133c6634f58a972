"""The learned backgammon evaluation: its fast path, its agreement with GNU Backgammon, and the
training code that produced it."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from tablas.engine.games.backgammon import START, Board, generate_plays
from tablas.engine.search import backgammon_eval, bgnet

NET = bgnet.default_net()


def random_positions(seed: int, games: int) -> list[tuple[Board, Board]]:
    """Positions before a roll along random games, the side about to roll first."""
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        me, opp = START, START
        while True:
            _, m2, o2 = rng.choice(generate_plays(me, opp, rng.randint(1, 6), rng.randint(1, 6)))
            if m2[0] == 15:
                break
            me, opp = o2, m2
            out.append((me, opp))
    return out


def test_the_table_path_is_the_network() -> None:
    """One position through the folded first layer gives what the plain network gives, and
    so does a large batch."""
    pos = random_positions(1, 3)
    boards = np.array([[me, opp] for me, opp in pos])
    contact = np.array([bgnet.in_contact(me, opp) for me, opp in pos])
    batch = NET.forward(bgnet.encode_batch(boards, contact, expert=NET.expert))
    one_by_one = np.array([NET.probabilities(me, opp) for me, opp in pos])
    many = NET.probabilities_many(pos)  # past DENSE_FROM: the plain product, not the table
    assert len(pos) > 100 and len(pos) >= bgnet.DENSE_FROM
    assert np.abs(batch - one_by_one).max() < 1e-5
    assert np.abs(many - one_by_one).max() < 1e-5
    assert ((batch >= 0) & (batch <= 1)).all()


def test_the_network_sees_a_won_and_a_lost_position() -> None:
    ahead = (13,) + (0,) * 5 + (2,) + (0,) * 19  # 13 off, 2 on the 6-point
    behind = (0,) * 13 + (15,) + (0,) * 12  # all 15 on the midpoint, none off
    assert NET.equity(ahead, behind) > 1.5  # a gammon, almost surely
    assert NET.equity(behind, ahead) < -1.5
    assert abs(NET.equity(START, START)) < 0.2


def test_weights_of_the_wrong_shape_are_refused() -> None:
    with pytest.raises(ValueError, match="do not fit"):
        bgnet.BGNet(np.zeros((10, 4), np.float32), np.zeros(4, np.float32),
                    np.zeros((4, 5), np.float32), np.zeros(5, np.float32))


def test_the_network_agrees_with_gnubg_far_better_than_the_hand_evaluation() -> None:
    """Differential check on games the training never saw (another seed): the equity error
    against gnubg's 0-ply, and the equity a 1-ply player gives up per decision."""
    pytest.importorskip("gnubg")
    from tools import bgnet_train as bt

    teacher = bt.Teacher()
    games_pos, games_dec = bt.generate(teacher, 12, seed=424242, keep_others=99)
    positions = [p for g in games_pos for p in g]
    decisions = [d for g in games_dec for d in g]
    res = bt.report(teacher, positions, decisions, bt.evaluators(NET))
    assert res["net"]["mae_contact"] < 0.1 < res["hand"]["mae_contact"]
    assert res["net"]["mae_race"] < 0.1
    assert res["net"]["lost_per_decision"] < res["hand"]["lost_per_decision"] / 2


def test_training_fits_the_teacher() -> None:
    """The training loop, small: a few games, a small network; the held-out error falls."""
    pytest.importorskip("gnubg")
    from tools import bgnet_train as bt

    teacher = bt.Teacher()
    games_pos, _ = bt.generate(teacher, 30, seed=7)
    train = [p for g in games_pos[3:] for p in g]
    held = [p for g in games_pos[:3] for p in g]
    x, y = bt.arrays(teacher, train)
    vx, vy = bt.arrays(teacher, held)
    errors: list[float] = []

    def log(line: str) -> None:
        errors.append(float(line.rsplit(" ", 1)[1]))

    bt.train(x, y, hidden=16, epochs=6, seed=1, batch=64, valid=(vx, vy), log=log)
    assert len(errors) == 6
    assert errors[-1] < 0.8 * errors[0]


def test_the_data_holds_the_positions_after_a_dance() -> None:
    """After a dance the side to roll faces checkers on the bar: no choice leads there, so
    the data keeps the results of rolls without a choice too (games of the hand-written
    policy, which leaves blots to hit)."""
    pytest.importorskip("gnubg")
    from tools import bgnet_train as bt

    teacher = bt.Teacher()
    games_pos, _ = bt.generate(teacher, 20, seed=3, policy="hand", eps_choices=(0.3,))
    positions = [p for g in games_pos for p in g]
    assert sum(1 for _, opp in positions if opp[25]) > 20


def test_net_equity_keeps_the_database_in_the_bear_off() -> None:
    me = (12,) + (1, 1, 1) + (0,) * 22
    opp = (11,) + (0, 0, 2, 2) + (0,) * 21
    assert backgammon_eval.stage(me, opp) == "bearoff"
    assert backgammon_eval.net_equity(me, opp) == backgammon_eval.equity(me, opp)


def test_judging_the_levels_by_gnubg() -> None:
    """The judge's bookkeeping: each stage gets its share of decisions, every error is a
    loss against the best rated play (never negative), and at 0 plies gnubg's own 0-ply
    choice is the best by definition."""
    pytest.importorskip("gnubg")
    from tools import bg_judge

    res = bg_judge.run(("medium", "hard"), 8, seed=5, budget_ms=None, exclude=None,
                       show_progress=False, plies=0)
    errors = res["errors"]
    assert set(errors) == {"medium", "hard", "gnubg-0ply"}
    assert res["n"] == 8 and res["dropped"] == 0
    for by_stage in errors.values():
        assert {s: len(v) for s, v in by_stage.items()} == dict.fromkeys(bg_judge.STAGES, 2)
        assert all(e >= 0 for v in by_stage.values() for e in v)
    assert all(e == 0 for v in errors["gnubg-0ply"].values() for e in v)
    assert len(res["times"]["hard"]) == 8
    assert "| medium |" in bg_judge.report(res)


def test_the_judge_takes_the_stages_asked_and_plays_a_named_network(tmp_path: Path) -> None:
    """``--stages`` keeps those stages only; ``LEVEL@WEIGHTS`` plays that network, here one
    that differs from the shipped one only in its outputs' bias, pushed to always answer a
    sure loss. Seeing every position alike, it errs more than the shipped network in the
    middle game, and the shipped network is back after the run."""
    pytest.importorskip("gnubg")
    from tools import bg_judge

    weights = tmp_path / "flat.npz"
    np.savez(weights, w1=NET.w1, b1=NET.b1, w2=NET.w2 * 0, b2=np.full(5, -30, np.float32))
    res = bg_judge.run(("hard", f"hard@{weights}"), 4, seed=5, budget_ms=None, exclude=None,
                       show_progress=False, plies=0, stages=("middle",))
    assert {s: len(v) for s, v in res["errors"]["hard"].items()} == {
        "opening": 0, "middle": 4, "race": 0, "bearoff": 0}
    assert bgnet.default_net() is NET
    flat, shipped = res["errors"][f"hard@{weights}"]["middle"], res["errors"]["hard"]["middle"]
    assert sum(flat) > sum(shipped)


def test_the_judge_keeps_out_positions_seen_in_training(tmp_path: Path) -> None:
    """A decision whose position is in the training data is dropped, and counted."""
    pytest.importorskip("gnubg")
    from tablas.engine.games.backgammon import Backgammon

    from tools import bg_judge

    game = Backgammon()
    first, _ = bg_judge.decisions(game, 8, seed=9, excluded=set())
    seen = [(s.boards[s.turn], s.boards[1 - s.turn]) for _, s in first[:3]]
    data = tmp_path / "seen.npz"
    np.savez(data, boards=np.array(seen, dtype=np.int8))
    keys = bg_judge.excluded_keys(str(data))
    again, dropped = bg_judge.decisions(game, 8, seed=9, excluded=keys)
    assert dropped >= 3
    assert not any(bg_judge._key((s.boards[s.turn], s.boards[1 - s.turn])) in keys
                   for _, s in again)


def test_training_resumes_from_its_checkpoint_exactly(tmp_path: Path) -> None:
    """Two epochs in one run, or one, a stop, and a second from the checkpoint: the same
    weights (the checkpoint keeps the random generator's state for the next epoch's order)."""
    from tools import bgnet_train as bt

    pos = random_positions(3, 4)
    boards = np.array([[me, opp] for me, opp in pos], dtype=np.int8)
    y = np.random.default_rng(0).random((len(pos), bgnet.N_OUTPUTS)).astype(np.float32)
    straight = bt.train(boards, y, hidden=8, epochs=2, seed=4, batch=64, log=lambda s: None)
    ck = str(tmp_path / "ck.npz")
    bt.train(boards, y, hidden=8, epochs=1, seed=4, batch=64, log=lambda s: None, checkpoint=ck)
    lines: list[str] = []
    resumed = bt.train(boards, y, hidden=8, epochs=2, seed=4, batch=64, log=lines.append,
                       checkpoint=ck)
    assert lines[0].startswith("resumed") and "epoch 1" in lines[0]
    assert np.array_equal(straight.w1, resumed.w1) and np.array_equal(straight.w2, resumed.w2)
