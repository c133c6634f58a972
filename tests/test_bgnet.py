"""The learned backgammon evaluation: its fast path, its agreement with GNU Backgammon, and the
training code that produced it."""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine.games.backgammon import START, Board, generate_plays
from engine.search import backgammon_eval, bgnet

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
    """One position through the folded first layer gives what the plain network gives."""
    pos = random_positions(1, 3)
    boards = np.array([[me, opp] for me, opp in pos])
    contact = np.array([bgnet.in_contact(me, opp) for me, opp in pos])
    batch = NET.forward(bgnet.encode_batch(boards, contact))
    one_by_one = np.array([NET.probabilities(me, opp) for me, opp in pos])
    assert len(pos) > 100
    assert np.abs(batch - one_by_one).max() < 1e-5
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


def test_net_equity_keeps_the_database_in_the_bear_off() -> None:
    me = (12,) + (1, 1, 1) + (0,) * 22
    opp = (11,) + (0, 0, 2, 2) + (0,) * 21
    assert backgammon_eval.stage(me, opp) == "bearoff"
    assert backgammon_eval.net_equity(me, opp) == backgammon_eval.equity(me, opp)


def test_judging_the_levels_by_gnubg() -> None:
    """The judge's bookkeeping: every compared play is rated, the best of them gives up
    nothing, and a loss is never negative."""
    pytest.importorskip("gnubg")
    from tools import bgnet_train as bt

    res = bt.judge(bt.Teacher(), decisions=3, seed=5, levels=("medium", "hard"), plies=0)
    assert set(res) == {"medium", "hard", "gnubg-0ply"}
    assert all(loss >= 0 and 0 <= missed <= 3 for loss, missed in res.values())
    # Judged at 0 ply, gnubg's own 0-ply choice is the best by definition.
    assert res["gnubg-0ply"] == (0.0, 0)
