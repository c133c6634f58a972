"""The review of a finished game: the engine's verdict on every action, for the review page.

:func:`review_game` replays a game from what the server stores (its options, opening rolls and
``(move, rolls)`` pairs, as ``server/room.py``'s ``replay`` does) and asks the game's reviewer
(its profile's ``review``, :mod:`tablas.engine.search.reviewers`) about every action, forced ones
and backgammon's cube actions included; rolls of the dice are not actions. It is pure and
CPU-bound (seconds per game, more for Connect-4, which is solved exactly from 12 stones on):
run it in a worker process, never on an event loop. Arguments and results are plain data,
picklable across processes. What each verdict means per game: ``docs/review.md``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tablas.engine.core import JSON, Game
from tablas.engine.errors import InvalidInputError
from tablas.engine.games import get_game
from tablas.engine.search.profiles import profile
from tablas.engine.search.reviewers import VERDICTS, Reviewer, Verdict
from tablas.engine.search.scores import Proven

__all__ = ["VERDICTS", "MoveReview", "Verdict", "players_summary", "review_game"]


@dataclass(frozen=True, slots=True)
class MoveReview:
    """The verdict on one action of a finished game.

    ``ply``: actions applied before this one (its index in the history, the ``ply`` the
    client sent it with); ``seat``: who acted; ``move_text``: the game's text for it;
    ``best_move_text``: the engine's preferred action there (None: no choice, a forced move);
    ``loss`` (≥ 0): what the action gave away against that one, in the game's score units
    (``profile(game).score.unit``) from the mover's side; ``verdict``: ``best`` (no loss),
    ``good``, ``inaccuracy``, ``mistake`` or ``blunder``; ``proven_before``/``proven_after``:
    the proven result for the mover before and after the action, None where unproven;
    ``score_after``: the value of the position after it from seat 0's side in the game's
    units, a proven result at ± the scale's ``cap``, for a chart (None if unknown);
    ``forced``: the mover had no choice (one legal action), so it is no decision. For the
    review page, which draws the board at every step: ``move`` and ``best_move`` as MOVE
    objects, and ``state_before``, the position it was played in (the state's JSON)."""

    ply: int
    seat: int
    move_text: str
    best_move_text: str | None
    loss: float
    verdict: Verdict
    proven_before: Proven | None
    proven_after: Proven | None
    score_after: float | None
    forced: bool = False
    move: JSON | None = None
    best_move: JSON | None = None
    state_before: JSON | None = None

    def to_json(self) -> JSON:
        """The contract's entry of ``GET /api/rooms/{id}/review``'s ``moves``, plus
        ``score_after``, ``forced``, ``move``, ``best_move`` and ``state_before``; numbers
        rounded to 4 decimals."""
        return {
            "ply": self.ply,
            "seat": self.seat,
            "move_text": self.move_text,
            "best_move_text": self.best_move_text,
            "loss": round(self.loss, 4),
            "verdict": self.verdict,
            "proven_before": self.proven_before,
            "proven_after": self.proven_after,
            "score_after": None if self.score_after is None else round(self.score_after, 4) + 0.0,
            "forced": self.forced,
            "move": self.move,
            "best_move": self.best_move,
            "state_before": self.state_before,
        }


def review_game(
    game_id: str,
    options: Mapping[str, Any],
    opening_rolls: Sequence[Sequence[int]],
    actions: Sequence[tuple[JSON, Sequence[Sequence[int]]]],
    *,
    seconds_per_move: float = 0.5,
    plies: Collection[int] | None = None,
) -> list[MoveReview]:
    """One entry per action of a finished game, in order, replayed from its options, opening
    rolls and (move, rolls) pairs exactly as the server stores them (``server/room.py``
    ``replay``). ``seconds_per_move`` is the search budget of each action where the game's
    profile does not require an exact solve (``docs/review.md``). An action that is not
    legal where it stands raises :class:`tablas.engine.errors.IllegalMoveError` (a record that does
    not replay); an unknown game, :class:`tablas.engine.errors.UnknownGameError`. ``plies``:
    judge only the actions of these indexes (the others are replayed, not judged; the server
    judges a game's actions one by one while it is played): the same entries as a whole
    review has for them, in order."""
    if seconds_per_move <= 0:
        raise InvalidInputError(f"seconds_per_move must be positive, got {seconds_per_move}")
    game = get_game(game_id)
    reviewer = profile(game_id).review
    budget_ms = seconds_per_move * 1000
    state = game.initial(dict(options))
    for roll in opening_rolls:
        state = game.apply_chance(state, tuple(roll))
    out: list[MoveReview] = []
    for ply, (move_json, rolls) in enumerate(actions):
        move = game.check_action(state, game.move_from_json(state, move_json))
        if plies is None or ply in plies:
            out.append(_judged(game, reviewer, state, move, ply, budget_ms))
        state = game.apply(state, move)
        for roll in rolls:
            state = game.apply_chance(state, tuple(roll))
    return out


def _judged(game: Game[Any, Any], reviewer: Reviewer, state: Any, move: Any, ply: int,
            budget_ms: float) -> MoveReview:
    """The entry of the legal ``move`` played at ``ply`` in ``state``."""
    seat = game.actor(state, move)
    assert seat is not None, "a legal move has a mover"
    j = reviewer.judge(game, state, move, budget_ms)
    # A forced move is its own best (the reviewer says so too); there was no choice to name.
    # (A resignation is never listed: always a choice.)
    forced = game.legal_moves(state) == [move]
    best = None if forced or j.best_move is None else game.move_text(state, j.best_move)
    score = j.score_after
    return MoveReview(
        ply=ply,
        seat=seat,
        move_text=game.move_text(state, move),
        best_move_text=best,
        loss=j.loss,
        verdict=j.verdict,
        proven_before=j.proven_before,
        proven_after=j.proven_after,
        score_after=None if score is None else score if seat == 0 else -score,
        forced=forced,
        move=game.move_to_json(move),
        best_move=None if best is None or j.best_move is None
        else game.move_to_json(j.best_move),
        state_before=game.state_to_json(state),
    )


def players_summary(entries: Sequence[Mapping[str, Any]]) -> list[JSON]:
    """Each side summed up from a review's entries as ``to_json`` writes them (the contract's
    ``players``, section 7): ``moves``, the seat's decisions (its entries but the forced
    ones); how many of its entries are ``inaccuracies``, ``mistakes`` and ``blunders``; and
    ``average_loss``, its entries' losses added up over its decisions (0 without one), to 4
    decimals: backgammon's is the equity given away per decision, what gnubg calls the error
    rate. Read from the entries themselves, so the summary is what they add up to. An entry
    stored before ``forced`` was written counts as forced when it names no best move and
    lost nothing."""
    out: list[JSON] = []
    for seat in (0, 1):
        mine = [e for e in entries if e.get("seat") == seat]
        decisions = [e for e in mine if not e.get(
            "forced", e.get("best_move_text") is None and not e.get("loss"))]
        total = sum(float(e.get("loss") or 0.0) for e in mine)
        out.append({
            "seat": seat,
            "moves": len(decisions),
            "inaccuracies": sum(e.get("verdict") == "inaccuracy" for e in mine),
            "mistakes": sum(e.get("verdict") == "mistake" for e in mine),
            "blunders": sum(e.get("verdict") == "blunder" for e in mine),
            "average_loss": round(total / len(decisions), 4) + 0.0 if decisions else 0.0,
        })
    return out
