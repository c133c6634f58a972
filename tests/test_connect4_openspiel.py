"""Differential test against OpenSpiel's ``connect_four`` (skipped if pyspiel is missing).

OpenSpiel numbers actions 0..6 left to right like our columns, seat 0 moves first, and
``returns()`` is ``[1, -1]``/``[-1, 1]`` for a win and ``[0, 0]`` for a draw.
"""

from __future__ import annotations

import random

import pytest
from tablas.engine.games.connect4 import Connect4

pyspiel = pytest.importorskip("pyspiel")

G = Connect4()


def test_random_games_agree_with_openspiel() -> None:
    game = pyspiel.load_game("connect_four")
    rng = random.Random(20240601)
    for _ in range(500):
        ours = G.initial()
        theirs = game.new_initial_state()
        while True:
            out = G.outcome(ours)
            assert theirs.is_terminal() == (out is not None), G.position_text(ours)
            if out is not None:
                returns = theirs.returns()
                expected = None if returns[0] == returns[1] else (0 if returns[0] > 0 else 1)
                assert out.winner == expected, G.position_text(ours)
                assert G.legal_moves(ours) == []
                break
            assert G.to_move(ours) == theirs.current_player()
            assert G.legal_moves(ours) == sorted(theirs.legal_actions())
            move = rng.choice(G.legal_moves(ours))
            ours = G.apply(ours, move)
            theirs.apply_action(move)
