"""Every registered game against the one protocol: random games, notations, errors.

Game-specific rules are tested in each game's own file; this file checks the promises the
search and the server rely on, the same way for all games.
"""

from __future__ import annotations

import ast
import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tablas.engine.core import Game, Outcome
from tablas.engine.errors import GameOverError, IllegalMoveError, TablasError, UnknownGameError
from tablas.engine.games import GAME_IDS, all_games, get_game

ENGINE = Path(__file__).resolve().parent.parent / "engine"
FORBIDDEN = {"asyncio", "websockets", "aiosqlite", "pydantic", "server", "sqlite3"}
MAX_ACTIONS = 3000


def advance(game: Game[Any, Any], state: Any, rng: random.Random) -> Any:
    """One random step: a roll at a chance node, else a random legal move."""
    if game.is_chance(state):
        outcomes = game.chance_outcomes(state)
        assert outcomes and abs(sum(p for _, p in outcomes) - 1) < 1e-9
        roll = rng.choices([o for o, _ in outcomes], weights=[p for _, p in outcomes])[0]
        return game.apply_chance(state, roll)
    moves = game.legal_moves(state)
    assert moves, f"{game.id}: no legal move in a non-terminal decision state"
    return game.apply(state, rng.choice(moves))


def random_game(game: Game[Any, Any], seed: int) -> list[Any]:
    rng = random.Random(seed)
    states = [game.initial()]
    while game.outcome(states[-1]) is None:
        assert len(states) < MAX_ACTIONS, f"{game.id}: game did not end"
        states.append(advance(game, states[-1], rng))
    return states


def test_registry_finds_every_game_by_its_contract_id() -> None:
    assert set(GAME_IDS) == {"tictactoe", "grundy", "connect4", "boom", "backgammon"}
    for gid in GAME_IDS:
        assert get_game(gid).id == gid
    with pytest.raises(UnknownGameError) as e:
        get_game("chess")
    assert "chess" in str(e.value) and isinstance(e.value, TablasError)


def test_engine_imports_no_io_frameworks() -> None:
    for path in ENGINE.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in FORBIDDEN, f"{path}: imports {name}"


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.id)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_end_in_a_valid_outcome(game: Game[Any, Any], seed: int) -> None:
    states = random_game(game, seed)
    out = game.outcome(states[-1])
    assert isinstance(out, Outcome)
    assert out.winner in (0, 1, None)
    assert (out.winner is None) == (out.points == 0)
    assert out.points >= 0 and out.reason
    assert game.to_move(states[-1]) is None and game.legal_moves(states[-1]) == []
    with pytest.raises(GameOverError):
        game.check_move(states[-1], None)
    json.dumps(out.to_json())


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.id)
@given(seed=st.integers(0, 2**32 - 1))
def test_notations_round_trip_along_random_games(game: Game[Any, Any], seed: int) -> None:
    for state in random_game(game, seed):
        text = game.position_text(state)
        assert game.position_text(game.parse_position(text)) == text
        snapshot = game.state_to_json(state)
        assert snapshot["notation"] == text
        json.dumps(snapshot)
        hash(game.key(state))
        if game.to_move(state) is None:
            continue
        results = set()
        for m in game.legal_moves(state):
            obj = game.move_to_json(m)
            assert json.loads(json.dumps(obj)) == obj
            assert game.check_move(state, game.move_from_json(state, obj)) == m
            assert game.check_move(state, game.parse_move(state, game.move_text(state, m))) == m
            results.add(game.key(game.apply(state, m)))
        assert len(results) == len(game.legal_moves(state)), "two listed moves reach one position"


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.id)
def test_apply_never_changes_its_argument(game: Game[Any, Any]) -> None:
    rng = random.Random(7)
    state = game.initial()
    for _ in range(40):
        if game.outcome(state) is not None:
            break
        before = (game.key(state), game.position_text(state))
        nxt = advance(game, state, rng)
        assert (game.key(state), game.position_text(state)) == before
        state = nxt


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.id)
def test_a_move_from_another_position_is_refused_with_the_position(game: Game[Any, Any]) -> None:
    """Play a random game; at each decision, a move that is legal later but not now is refused."""
    states = [s for s in random_game(game, 11) if game.to_move(s) is not None]
    for earlier, later in itertools.pairwise(states):
        now = set(map(game.key, (game.apply(earlier, m) for m in game.legal_moves(earlier))))
        for m in game.legal_moves(later):
            try:
                listed = game.check_move(earlier, m)
            except IllegalMoveError as e:
                assert game.position_text(earlier) in str(e)
                continue
            assert game.key(game.apply(earlier, listed)) in now
