"""Backgammon bots: cubeless expectiminimax over plays, and cube decisions from its equity.

Levels (plies are decision plies; "beam N" keeps only the N best plays of the 1-ply search for
the deeper one, the classic way to make 2-ply affordable):

=========  ==========================================================================
random     a uniform legal play; never doubles; takes at random
easy       1-ply, the hand-written evaluation, each play's equity with uniform noise ±0.15
medium     1-ply, the hand-written evaluation
hard       1-ply, the learned evaluation (what gnubg calls 0-ply: each play's position
           valued by the network)
max        the learned evaluation; hard's ranking, then 2-ply Star2 expectiminimax over
           its 8 best plays (every reply searched), then, in the time left, the classic
           beam search one ply deeper: the best 2 plays searched 3 plies deep, only the
           best 2 replies by a 1-ply look going deeper at each decision inside (Star2
           throughout); at most 2 s a play
=========  ==========================================================================

Each level errs clearly less than the one below (docs/strength.md): hard is gnubg's
"expert" strength in a few milliseconds, max its "world class" within 2 s. Hard does not
search deeper: a 2-ply hard plays within a few ten-thousandths of a point per decision of
max, a difference no match between them can show.

The evaluations are :func:`tablas.engine.search.backgammon_eval.equity` (hand-written: pips, points,
primes, anchors, blots and shots, by stage) and
:func:`tablas.engine.search.backgammon_eval.net_equity` (a network fitted to GNU Backgammon's
evaluations, :mod:`tablas.engine.search.bgnet`); both use the bear-off database in the bear-off. The
two levels in the middle differ in what they know as well as in how far they look, which is
what a player climbing the ladder should feel.

Opening: every level from ``medium`` up plays the opening roll from the book
(:mod:`tablas.engine.search.opening_book`).

Cube (every level but ``random``): before rolling, the five probabilities of how the game
ends, 1-ply (:func:`roll_probabilities`: each of the 21 rolls' best play by the level's
evaluation, then the learned network's probabilities of where it leads), turned into each
cube action's cubeful equity by Janowski's model (:mod:`tablas.engine.search.cubeful`): the bot
doubles when double/take or double/drop, whichever is worse for it, beats no double, and
takes when the take is worth at least the drop's -1. So gammons, cube ownership and the cube's
efficiency (contact or race) all count, and a side too good to double plays on for its
gammons.

Match play: the current game alone is searched
(:func:`~tablas.engine.games.backgammon.single_game`). The levels with the learned evaluation
(``hard``, ``max``) choose their plays by match equity (:func:`match_search`: the network's
probabilities of each way the game can end, weighed by the match equity table); the hand-written
one gives no such probabilities, so ``easy`` and ``medium`` play as in a money game. Cube actions
go by match equity (:mod:`tablas.engine.search.match_equity`, the Kazaross XG2 table): the
probabilities of each way the game can end, 1-ply as in a money game (each roll's best play by the
level's evaluation, then the learned network's five probabilities of the position it leads to, the
bear-off database's winning chance where it knows), turned into match-winning chances.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tablas.engine.core import JSON, Outcome
from tablas.engine.games.backgammon import (
    CHECKERS,
    DICE_OUTCOMES,
    OFF,
    Backgammon,
    BGState,
    Match,
    generate_plays,
    single_game,
)
from tablas.engine.search import bearoff, bgnet, cubeful, match_equity
from tablas.engine.search.backgammon_eval import (
    BULK_EQUITIES,
    EQUITIES,
    for_seat0,
    for_seat0_bulk,
)
from tablas.engine.search.decision import Decision, Level, SearchInfo
from tablas.engine.search.expectimax import Expectimax, SearchTimeout, points_from_seat0
from tablas.engine.search.opening_book import book_play

NOISE = {"easy": 0.15}
EVALUATION = {"random": "hand", "easy": "hand", "medium": "hand", "hard": "net", "max": "net"}
LO, HI = -3.0, 3.0


# The passes of the root search, per level: (how many of the best plays so far are searched
# again, plies deep, beam inside the tree). Each pass re-ranks those plays. When the time
# budget runs out, the first pass keeps the plays it finished (above the rest, still ranked
# 1-ply); a later pass is dropped and the last complete ranking stands.
PASSES: dict[str, tuple[tuple[int, int, int | None], ...]] = {
    "max": ((8, 2, None), (2, 3, 2)),
}


# A level's thinking time per play at most, whatever budget the caller gives (a shorter one
# still applies): what a player waits for a bot's move, and the target its strength is
# measured at (2 s, docs/strength.md). A little under it, because the search looks at the
# clock between steps and a step (the replies to a roll) takes up to some tens of ms. What
# the time allows of the deeper passes is kept, as rank_plays says; with no time at all, the
# 1-ply ranking decides.
THINK_MS: dict[str, float] = {"max": 1850.0}


def think_budget(level: str, budget_ms: float | None) -> float | None:
    """The time ``level`` may think about a play: the caller's budget within the level's own
    cap (:data:`THINK_MS`); None: no limit. Bots and ``tablas analyze --level`` both use it,
    so an analysis at a level takes the time that level's bot takes."""
    cap = THINK_MS.get(level)
    if cap is None:
        return budget_ms
    return cap if budget_ms is None else min(budget_ms, cap)


_GAME = Backgammon()


def skip_cube(state: BGState) -> BGState:
    """A position before the roll, rolled without doubling (the cube left out)."""
    return _GAME.apply(state, "roll") if state.phase == "roll" else state


def cubeless(
    game: Backgammon, beam: int | None = None, cube: int = 1, evaluation: str = "hand"
) -> Expectimax[BGState, Any]:
    """A Star2 search that skips the cube: after a play the opponent simply rolls.

    ``cube`` is the cube's value in the searched position: a game that ends inside the
    search scores its points divided by it, on the same per-unit scale as the evaluation
    of the positions that do not end (a bear-off won with the cube on 2 is worth 1, as the
    evaluation of a sure win is, not 2). ``evaluation`` names one of
    :data:`~tablas.engine.search.backgammon_eval.EQUITIES`."""

    def terminal(outcome: Outcome) -> float:
        return points_from_seat0(outcome) / cube

    bulk = BULK_EQUITIES.get(evaluation)
    return Expectimax(game, for_seat0(EQUITIES[evaluation]), LO, HI, star=2, normalize=skip_cube,
                      beam=beam, terminal=terminal,
                      evaluate_many=None if bulk is None else for_seat0_bulk(bulk))


def _signed(seat: int, v: float) -> float:
    return v if seat == 0 else -v


def rank_plays(
    game: Backgammon, state: BGState, level: str, budget_ms: float | None, rng: random.Random,
    exact_for: Sequence[Any] = (),
) -> tuple[list[tuple[Any, float]], int, int]:
    """Every play with its equity for the mover (best first), the plies searched, nodes.

    Only the best play's equity is exact at the deepest level: the others are searched
    against it (that is what lets Star1/Star2 prune), so theirs are bounds, or 1-ply values
    for the plays no deeper pass reached. The plays in ``exact_for`` (a review's played play)
    are searched again to the same depth with a full window, past the budget, so that their
    equity and the best's come from the same search; the ranking is sorted again after. With
    ``exact_for`` the first deeper play is searched whatever the budget. In a match, the
    current game alone is searched."""
    match = state.match
    state = single_game(state)
    by_match = match is not None and EVALUATION[level] == "net"
    search = (match_search(match, state.cube) if match is not None and by_match
              else cubeless(game, None, state.cube, EVALUATION[level]))
    # The budget counts from here: the 1-ply ranking of a double's hundred plays is part of it.
    deadline = None if budget_ms is None else search.clock() + budget_ms / 1000
    seat = state.turn
    children = search.children(state)
    search.prefetch([c for _, c in children])
    ranked = [(m, _signed(seat, search.value(c, 0))) for m, c in children]
    noise = NOISE.get(level, 0.0)
    if noise:
        ranked = [(m, v + rng.uniform(-noise, noise)) for m, v in ranked]
    ranked.sort(key=lambda mv: -mv[1])
    plies_done = 1
    if len(ranked) == 1:
        return _as_emg(ranked, match if by_match else None, seat, state.cube), plies_done, \
            search.stats.nodes
    child_of = dict(children)
    beam_done: int | None = None
    for n, (width, plies, beam) in enumerate(PASSES.get(level, ())):
        search.beam = beam
        deeper: list[tuple[Any, float]] = []
        cut = False
        try:
            for m, _ in ranked[:width]:
                # A review's first deeper play is searched whatever the time: its verdicts
                # compare plays searched alike, and at least that deep.
                search.deadline = None if exact_for and n == 0 and not deeper else deadline
                deeper.append((m, _searched(search, child_of[m], seat, plies, deeper)))
        except SearchTimeout:
            cut = True
        # The first pass cut short keeps the plays it finished (the best of the 1-ply ranking
        # first), a later one is dropped whole: its ranking stands only complete.
        if cut and (n or not deeper):
            break
        deeper.sort(key=lambda mv: -mv[1])
        searched = {m for m, _ in deeper}
        ranked = deeper + [mv for mv in ranked if mv[0] not in searched]
        plies_done, beam_done = plies, beam
        if cut:
            break
    redo = {m for m in exact_for if m != ranked[0][0]} if plies_done > 1 else set()
    if redo:
        search.beam, search.deadline = beam_done, None
        ranked = [(m, _signed(seat, search.value(child_of[m], plies_done - 1)) if m in redo
                   else v) for m, v in ranked]
        ranked.sort(key=lambda mv: -mv[1])
    return _as_emg(ranked, match if by_match else None, seat, state.cube), plies_done, \
        search.stats.nodes


def _as_emg(ranked: list[tuple[Any, float]], match: Match | None, seat: int, cube: int
            ) -> list[tuple[Any, float]]:
    """A match search's values (the mover's 2 MWC - 1) on the money scale of the cube
    (EMG, :func:`tablas.engine.search.match_equity.emg`), the order unchanged; a money search's
    as they are."""
    if match is None:
        return ranked
    return [(m, match_equity.emg(match, seat, cube, (v + 1) / 2)) for m, v in ranked]


_ENDS = (1, 2, 3, -1, -2, -3)


def match_search(match: Match, cube: int, beam: int | None = None
                 ) -> Expectimax[BGState, Any]:
    """A Star2 search of a match's current game (a single-game state, the cube skipped) by
    match equity: a position's value is seat 0's chance of winning the match, as 2 MWC - 1,
    from the network's probabilities of each way the game can end, each weighed by the
    match equity table's chance after it (:mod:`tablas.engine.search.match_equity`)."""
    ends = {k: 2 * match_equity.after_game(match, 0, k * cube) - 1 for k in _ENDS}

    def value(probs: Sequence[float], turn: int) -> float:
        sign = 1 if turn == 0 else -1
        return sum(w * ends[sign * k] for k, w in match_equity.outcome_weights(probs))

    def evaluate(s: BGState) -> float:
        return value(position_probabilities(s.boards[s.turn], s.boards[1 - s.turn]), s.turn)

    def evaluate_many(states: list[BGState]) -> list[float]:
        probs = positions_probabilities([(s.boards[s.turn], s.boards[1 - s.turn])
                                         for s in states])
        return [value(p, s.turn) for s, p in zip(states, probs)]

    def terminal(outcome: Outcome) -> float:
        k = max(1, min(3, outcome.points // cube))
        return ends[k if outcome.winner == 0 else -k]

    return Expectimax(_GAME, evaluate, -1.0, 1.0, star=2, normalize=skip_cube, beam=beam,
                      terminal=terminal, evaluate_many=evaluate_many)


def _searched(
    search: Expectimax[BGState, Any], child: BGState, seat: int, plies: int,
    done: list[tuple[Any, float]],
) -> float:
    """A play's equity for the mover, searched ``plies`` deep (the play itself is the first),
    in a window that only asks whether it beats the best of ``done``."""
    if not done:
        return _signed(seat, search.value(child, plies - 1))
    bar = max(v for _, v in done)
    if seat == 0:
        return search.value(child, plies - 1, alpha=bar, beta=HI)
    return -search.value(child, plies - 1, alpha=LO, beta=-bar)


def _settled_probabilities(me: Sequence[int], opp: Sequence[int]) -> list[float] | None:
    """The certain five probabilities when a side has borne off everything, else None."""
    if me[OFF] != CHECKERS and opp[OFF] != CHECKERS:
        return None
    won = me[OFF] == CHECKERS
    loser = opp if won else me
    gammon = loser[OFF] == 0
    bg = gammon and (loser[25] > 0 or any(loser[19:25]))
    return [1.0, float(gammon), float(bg), 0.0, 0.0] if won else \
        [0.0, 0.0, 0.0, float(gammon), float(bg)]


def _with_bearoff(me: Sequence[int], opp: Sequence[int], probs: list[float]) -> list[float]:
    if bearoff.is_bearoff(me, opp):
        probs[0] = bearoff.win_probability(bearoff.home(me), bearoff.home(opp))
    return probs


def position_probabilities(me: Sequence[int], opp: Sequence[int]) -> list[float]:
    """gnubg's five probabilities for ``me``, about to roll: the learned network's, with the
    bear-off database's winning chance once both sides bear off, and the certain result when
    a side has borne off everything."""
    settled = _settled_probabilities(me, opp)
    if settled is not None:
        return settled
    return _with_bearoff(me, opp, [float(p) for p in bgnet.default_net().probabilities(me, opp)])


def positions_probabilities(positions: Sequence[tuple[Sequence[int], Sequence[int]]]
                            ) -> list[list[float]]:
    """:func:`position_probabilities` of many positions, the network's share in one call."""
    out = [_settled_probabilities(me, opp) for me, opp in positions]
    rest = [i for i, p in enumerate(out) if p is None]
    if rest:
        rows = bgnet.default_net().probabilities_many([positions[i] for i in rest]).tolist()
        for i, row in zip(rest, rows):
            out[i] = _with_bearoff(*positions[i], [float(x) for x in row])
    return [p for p in out if p is not None]


def roll_probabilities(state: BGState, level: str = "medium") -> list[float]:
    """The five probabilities of the player on roll (``state.turn``) before rolling, 1-ply:
    each roll's best play by the level's evaluation, the probabilities of where it leads,
    weighed by the roll's chance."""
    evaluation = EVALUATION[level]
    bulk = BULK_EQUITIES.get(evaluation)
    single = EQUITIES[evaluation]
    me, opp = state.boards[state.turn], state.boards[1 - state.turn]
    chosen: list[tuple[Sequence[int], Sequence[int]]] = []  # per roll: (opponent, me) after
    for a, b in (roll for roll, _ in DICE_OUTCOMES):
        plays = generate_plays(me, opp, a, b)
        afters = [(o2, m2) for _, m2, o2 in plays]
        values = bulk(afters) if bulk is not None else [single(*x) for x in afters]
        # The opponent rolls next: the play that leaves it the least is the best.
        scored = [-9.0 if m2[OFF] == CHECKERS else v for (_, m2), v in zip(afters, values)]
        chosen.append(afters[min(range(len(afters)), key=scored.__getitem__)])
    total = [0.0] * 5
    for theirs, (_, p) in zip(positions_probabilities(chosen), DICE_OUTCOMES):
        mine = [1.0 - theirs[0], theirs[3], theirs[4], theirs[1], theirs[2]]
        total = [t + p * x for t, x in zip(total, mine)]
    return total


@dataclass(frozen=True)
class CubeVerdict:
    """A cube decision (``roll``/``double`` before the roll, ``take``/``drop`` when doubled)
    as a bot sees it: the action it takes, every action's value for the deciding side in
    units of the cube before the decision (money: cubeful equity, :mod:`cubeful`; a match:
    EMG, :mod:`match_equity`), and that side's cubeless money equity (points per cube)."""

    action: str
    values: dict[str, float]
    cubeless: float


def cube_verdict(state: BGState, level: str) -> CubeVerdict:
    """The bots' cube decision in ``state``'s ``roll`` or ``take`` phase, at ``level``'s
    evaluation (any level but ``random``): Janowski's cubeful equity in a money game, the
    match equity table in a match."""
    probs = roll_probabilities(state, level)
    doubler = state.turn  # who is on roll, doubled or not
    if state.match is not None:
        values = match_equity.cube_values(state, probs)
    else:
        # A "roll" phase is only asked of a side that may double: the cube is its own or
        # centred.
        x = cubeful.efficiency(state.boards[doubler], state.boards[1 - doubler])
        access = "centre" if state.owner is None else "own"
        values = cubeful.cube_values(state.phase, access, probs, x)
    e = cubeful.Cubeless.from_probs(probs).equity
    return CubeVerdict(cubeful.best_action(values), values, e if state.phase == "roll" else -e)


def _cube_decision(state: BGState, level: str, rng: random.Random) -> Decision:
    if level == "random":
        action = "roll" if state.phase == "roll" else rng.choice(["take", "drop"])
        return Decision({"action": action}, action)
    verdict = cube_verdict(state, level)
    return Decision({"action": verdict.action}, verdict.action,
                    round(verdict.values[verdict.action], 4))


class BackgammonBots:
    """Backgammon's bots and analysis, as its profile offers them (see the module's table)."""

    def decide(
        self,
        game: Any,
        state: BGState,
        level: Level,
        budget_ms: float | None,
        seed: int,
        on_progress: Callable[[SearchInfo], None] | None,
    ) -> Decision:
        decision = self._decide(game, state, level, budget_ms, seed)
        if on_progress is not None:  # one report: the search has no iterations to show
            on_progress(decision.info())
        return decision

    @staticmethod
    def _decide(game: Any, state: BGState, level: Level, budget_ms: float | None, seed: int
                ) -> Decision:
        rng = random.Random(seed)
        moves = game.legal_moves(state)
        if not moves:
            raise ValueError(f"backgammon: no decision in phase {state.phase!r}")
        if state.phase in ("roll", "take"):
            return _cube_decision(state, level, rng)
        if level == "random":
            m = rng.choice(moves)
            return Decision(game.move_to_json(m), game.move_text(state, m))
        if level != "easy":
            play = book_play(state)
            if play is not None:
                text = game.move_text(state, play)
                return Decision(game.move_to_json(play), text, pv=[text])
        ranked, depth, nodes = rank_plays(game, state, level, think_budget(level, budget_ms),
                                          rng)
        m, score = ranked[0]
        text = game.move_text(state, m)
        return Decision(game.move_to_json(m), text, round(score, 4), depth, nodes, pv=[text])

    def end_score(self, state: BGState, outcome: Outcome, seat: int) -> float:
        """A finished game's score for ``seat`` as the cubeless search scores an end: the
        points won (negative: lost) per unit of the cube, e.g. -2.0 for a gammon lost."""
        return round(_signed(seat, points_from_seat0(outcome)) / state.cube, 4)

    def analyze(
        self,
        game: Any,
        state: BGState,
        position: str,
        depth: int | None,
        time_ms: float | None,
        level: str | None,
    ) -> JSON:
        """``tablas analyze`` for backgammon, a position in play with its dice: each play's
        cubeless equity for the mover, searched as the level's bot searches, within its
        thinking time (:func:`think_budget`; ``max`` without a level or with ``depth`` ≥ 2)."""
        if state.phase != "move":
            raise ValueError("backgammon analysis needs the dice (--dice AB)")
        lvl = level or ("max" if (depth or 2) >= 2 else "medium")
        t0 = time.perf_counter()
        ranked, used, nodes = rank_plays(game, state, lvl, think_budget(lvl, time_ms),
                                         random.Random(0))
        best, score = ranked[0]
        text = game.move_text(state, best)
        return {
            "game": game.id,
            "position": position,
            "best_move": game.move_to_json(best),
            "best_move_text": text,
            "score": round(score, 4),
            "proven": None,
            "distance": None,
            "pv": [text],
            "top": [
                {
                    "move": game.move_to_json(m),
                    "move_text": game.move_text(state, m),
                    "score": round(v, 4),
                }
                for m, v in ranked
            ],
            "depth": used,
            "nodes": nodes,
            "time_ms": round((time.perf_counter() - t0) * 1000, 3),
        }
