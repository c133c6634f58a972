"""One game of a match (contract section 17): two players from an opening to the end, the
dice drawn from the pair's own generator (both games of a pair get the same rolls), the time
each side took, and the record written to ``--out``.

Time: with ``--move-ms MS`` each move has MS milliseconds (``go MS``), and an engine that has
not answered MS + :data:`GRACE_MS` after its ``go`` line loses on time; with ``--clock``
each side's clock runs from the ``go`` line to the answer read, the increment added after
each move, and ``go`` says the time left: an engine loses when it runs out. A house level
thinks for the move's time (``--move-ms``) or a twentieth of its time left plus the
increment (``--clock``).
"""

from __future__ import annotations

import random
import time
import zlib
from dataclasses import dataclass
from typing import Any

from tablas.engine.core import Game
from tablas.engine.games import get_game
from tablas.server.match.players import Forfeit, Player

GRACE_MS = 100  # beyond --move-ms, for the trip through the pipes and the scheduler


@dataclass(frozen=True, slots=True)
class Deal:
    """What one game is: the pair it belongs to, who sits where, where it starts."""

    index: int  # the game's number in the match, from 0
    pair: int  # the opening pair it belongs to (its two games share opening and dice)
    players: tuple[str, str]  # names, by seat
    opening: str  # the position it starts from (section 4's notation)
    dice_seed: str  # the pair's dice generator's seed


def draw(game: Game[Any, Any], state: Any, rng: random.Random) -> Any:
    """A roll drawn from the chance node's outcomes with their probabilities."""
    r = rng.random()
    outcomes = game.chance_outcomes(state)
    for outcome, p in outcomes:
        r -= p
        if r < 0:
            return outcome
    return outcomes[-1][0]


async def play(game_id: str, deal: Deal, seats: tuple[Player, Player], move_ms: int | None,
               clock: tuple[int, int] | None) -> dict[str, Any]:
    """Plays the game out; its record (``--out``'s JSON line)."""
    game = get_game(game_id)
    state = game.parse_position(deal.opening)
    dice = random.Random(deal.dice_seed)
    left = [float(clock[0]), float(clock[0])] if clock is not None else [0.0, 0.0]
    ms = [0.0, 0.0]
    moves: list[str] = []
    rolls: list[dict[str, Any]] = []
    winner: int | None = None
    points = 1
    reason = ""
    detail: str | None = None
    begun = [False, False]
    try:
        for seat in (0, 1):
            try:
                await seats[seat].begin(game, seat, {})
                begun[seat] = True
            except Forfeit as f:
                winner, reason, detail = 1 - seat, f.reason, str(f)
                break
        while winner is None:
            outcome = game.outcome(state)
            if outcome is not None:
                winner, points, reason = outcome.winner, outcome.points, outcome.reason
                break
            if game.is_chance(state):
                roll = draw(game, state, dice)
                rolls.append({"ply": len(moves), "dice": game.chance_text(roll)})
                state = game.apply_chance(state, roll)
                continue
            mover = game.to_move(state)
            assert mover is not None
            legal = game.legal_moves(state)
            if clock is None:
                assert move_ms is not None
                go, within, budget = move_ms, (move_ms + GRACE_MS) / 1000, float(move_ms)
            else:
                go, within = int(left[mover]), left[mover] / 1000
                budget = max(1.0, min(left[mover] / 2, left[mover] / 20 + clock[1]))
            began = time.perf_counter()
            try:
                choice, text = await seats[mover].choose(game, state, legal, go, within, budget,
                                                         _seed(deal, len(moves)))
            except Forfeit as f:
                ms[mover] += (time.perf_counter() - began) * 1000
                winner, points, reason, detail = 1 - mover, game.stake(state), f.reason, str(f)
                break
            took = (time.perf_counter() - began) * 1000
            ms[mover] += took
            if clock is not None:
                left[mover] -= took
                if left[mover] < 0:
                    winner, points, reason = 1 - mover, game.stake(state), "time_forfeit"
                    detail = "its clock ran out"
                    break
                left[mover] += clock[1]
            moves.append(text)
            state = game.apply(state, legal[choice])
        for seat in (0, 1):
            if begun[seat]:
                word = "DRAW" if winner is None else "WIN" if winner == seat else "LOSS"
                await seats[seat].end(word, reason)
    finally:
        for p in seats:
            p.abandon()  # whatever is left of them (nothing, after a good end)
    record: dict[str, Any] = {
        "game": game_id, "index": deal.index, "pair": deal.pair,
        "players": list(deal.players), "seats": {deal.players[0]: 0, deal.players[1]: 1},
        "opening": deal.opening, "moves": moves,
        "result": {"winner": winner, "points": points}, "reason": reason,
        "ms": [round(ms[0], 1), round(ms[1], 1)],
    }
    if rolls:
        record["rolls"] = rolls
    if detail is not None:
        record["detail"] = detail
    return record


def _seed(deal: Deal, ply: int) -> int:
    """A house level's noise at this ply: the same in both games of a pair."""
    return zlib.crc32(f"{deal.dice_seed}/{ply}".encode()) & 0x7FFFFFFF
