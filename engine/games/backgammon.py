"""Backgammon: the money game with the doubling cube, or a match to N points.

Rules as played here (a *money game*, unless the options ask for a match):

* Seats 0 and 1, 15 checkers each. Points are numbered from the mover's side: 24..1, ``25`` is
  the bar and ``0`` is off. A checker on the bar must enter before any other moves; a point
  with two or more opposing checkers is blocked; landing on a single opposing checker (a blot)
  hits it to the bar. Doubles play four times. A player must use as many dice as possible; when
  only one die can be used, the larger one if it can be. Bearing off needs all 15 checkers in
  the home board (points 1-6 or off); a checker bears off with the exact number, or with a
  larger number from the highest occupied point only.
* The opening roll: each seat rolls one die (ties are re-rolled, so they never occur); the
  higher die moves first and plays both dice. Nobody can double before that first play.
* The cube starts centred at 1. Before rolling, a player may double if the cube is centred or
  theirs and its value is below 64. The opponent takes (cube x2, the taker owns it, and the
  doubler rolls) or drops (the doubler wins the cube value before doubling, reason ``drop``).
  Option ``{"cube": false}`` plays without the cube.
* The game ends when a player has borne off all 15: the cube value times 1 (``single``),
  2 (``gammon``: the loser has borne off none) or 3 (``backgammon``: the loser has borne off none
  and still has a checker on the bar or in the winner's home board).
* No Jacoby rule, no beavers.
* A match (option ``{"match_to": N}``, N from 1 to 25): games follow one another until a side
  has N points or more; each game's points (cube x 1, 2 or 3, or the cube before a drop) go
  to its winner's score, uncapped. The game after a side first reaches N-1 is the *Crawford*
  game: nobody may double in it; doubling is allowed again in the games after it. A match to
  1 has no Crawford game (it has one game). A game that ends without ending the match leads
  straight to the next game's opening roll, with a fresh centred cube; only the end of the
  match is an outcome (``points``: the winner's match score, reason ``match``), and the last
  game's own result stays readable as ``state.match.last_game``. ``cube: false`` combines
  with a match (every game then worth 1, 2 or 3).

Phases of a :class:`BGState` (``state.phase``):

``opening``  chance: the opening roll, outcomes ``(d0, d1)`` = seat 0's die, seat 1's die.
``dice``     chance: the roll of the player on roll (``state.turn``); 21 outcomes ``(a, b)``.
``move``     decision: ``state.turn`` plays ``state.dice``; moves are plays.
``roll``     decision: ``state.turn`` may ``"double"`` or ``"roll"``.
``take``     decision: ``state.turn`` has doubled; the opponent ``"take"``\\ s or ``"drop"``\\ s.
``over``     terminal: ``state.result`` is the :class:`Outcome` (of the game, or of the match).

Moves: a play is a tuple of steps ``((from, to), ...)``, one per die used, in the mover's
numbering; ``()`` is the play when no checker can move (it must still be played). Actions are
the strings ``"roll"``, ``"double"``, ``"take"`` and ``"drop"``. A :class:`Resignation`
(``{"action": "resign", "seat": S, "points": P}``) is a resignation accepted: seat S gives up
the current game for P (1 single, 2 gammon, 3 backgammon) times the cube, reason ``resign``,
as if the game had ended on the board (a match goes on to its next game). It is never among
the legal moves (:meth:`Backgammon.resignation` checks one; a server applies it once the other
side accepts), so ``check_move`` refuses it, and its seat need not be the one on roll
(:meth:`Backgammon.actor`).

Position notation: the GNU Backgammon Position ID (14 characters), written from the point of
view of the player on roll (``state.turn``). Parsing one gives seat 0 on roll, awaiting its
roll (a ``dice`` chance state), cube centred at 1. A parsed position where a side has no
checker left is terminal, that side the winner.

Helpers for evaluations and tools: :func:`board` (a seat's 26 counts from its own side:
index 0 off, 1..24 points, 25 bar), :func:`boards_for_mover` (the mover's and the opponent's
counts, both from the mover's side), :func:`pip_count`, :func:`position_id`,
:func:`decode_position_id`, :func:`generate_plays` (plays with their resulting counts) and the
:class:`BGState` attributes ``boards``, ``turn``, ``phase``, ``dice``, ``cube``, ``owner``,
``cube_enabled``, ``result`` and ``match`` (a :class:`Match`, or None in a money game);
:func:`single_game` is a match's current game seen as a money game (what searches walk).
The state's types and the Position ID's writer are :mod:`tablas.engine.games.backgammon_state`'s,
below this module and the ``.mat`` writer, and handed out here too.
"""

from __future__ import annotations

import base64
import itertools
import re
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from tablas.engine.core import JSON, Game, Outcome, RecordFormat, check_options
from tablas.engine.errors import (
    GameOverError,
    IllegalMoveError,
    InvalidDiceError,
    InvalidInputError,
    InvalidMoveError,
    InvalidPositionError,
)
from tablas.engine.games.backgammon_mat import MAT

# The state's types are a module below this one and the .mat writer, which builds on them
# (engine.games.backgammon_state says why); this module hands them out as its own.
from tablas.engine.games.backgammon_state import BAR as BAR
from tablas.engine.games.backgammon_state import CHECKERS as CHECKERS
from tablas.engine.games.backgammon_state import OFF as OFF
from tablas.engine.games.backgammon_state import RESIGN_VALUES as RESIGN_VALUES
from tablas.engine.games.backgammon_state import BGState as BGState
from tablas.engine.games.backgammon_state import Board as Board
from tablas.engine.games.backgammon_state import Match as Match
from tablas.engine.games.backgammon_state import Play as Play
from tablas.engine.games.backgammon_state import Resignation as Resignation
from tablas.engine.games.backgammon_state import Step as Step
from tablas.engine.games.backgammon_state import encode_position_id as encode_position_id
from tablas.engine.games.backgammon_state import position_id as position_id

Move = Play | str | Resignation

MAX_CUBE = 64
ACTIONS: tuple[str, ...] = ("roll", "double", "take", "drop")
PHASES: tuple[str, ...] = ("opening", "dice", "move", "roll", "take", "over")

START: Board = (0, 0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0)

OPENING_OUTCOMES: tuple[tuple[tuple[int, int], float], ...] = tuple(
    ((a, b), 1 / 30) for a in range(1, 7) for b in range(1, 7) if a != b
)
DICE_OUTCOMES: tuple[tuple[tuple[int, int], float], ...] = tuple(
    ((a, b), (1 if a == b else 2) / 36) for a in range(6, 0, -1) for b in range(a, 0, -1)
)

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
MAX_MATCH = 25


# --- helpers --------------------------------------------------------------------------------


def board(state: BGState, seat: int) -> Board:
    """``seat``'s 26 counts from its own side: index 0 off, 1..24 points, 25 bar."""
    return state.boards[seat]


def boards_for_mover(state: BGState) -> tuple[Board, Board]:
    """(player on roll's counts, opponent's counts), each from its owner's own side."""
    return state.boards[state.turn], state.boards[1 - state.turn]


def pip_count(state: BGState, seat: int) -> int:
    """The pips ``seat`` still has to move to bear off (bar counts 25)."""
    b = state.boards[seat]
    return sum(i * b[i] for i in range(1, 26))


def _outcome_for(winner: int, loser_board: Board, cube: int) -> Outcome:
    if loser_board[OFF] > 0:
        return Outcome(winner, cube, "single")
    # The winner's home board (its points 1..6) is the loser's 19..24.
    if loser_board[BAR] or any(loser_board[19:25]):
        return Outcome(winner, 3 * cube, "backgammon")
    return Outcome(winner, 2 * cube, "gammon")


def _game_over(state: BGState, boards: tuple[Board, Board], turn: int,
               outcome: Outcome) -> BGState:
    """The state once a game ends with ``outcome``: the end (a money game, or the last game of
    a match: then the match's outcome) or the next game's opening roll."""
    m = state.match
    if m is None:
        return BGState(boards, turn, "over", None, state.cube, state.owner, state.cube_enabled,
                       outcome)
    nxt = m.after(outcome)
    if nxt.over:
        assert outcome.winner is not None
        won = Outcome(outcome.winner, nxt.score[outcome.winner], "match")
        return BGState(boards, turn, "over", None, state.cube, state.owner, state.cube_enabled,
                       won, nxt)
    return BGState((START, START), 0, "opening", cube_enabled=state.cube_enabled, match=nxt)


def single_game(state: BGState) -> BGState:
    """``state`` as a money game: a match's current game with the match left out, so that its
    end is an end (searches walk this; a match's next game is no part of a position's
    future that they should see)."""
    if state.match is None:
        return state
    s = state
    return BGState(s.boards, s.turn, s.phase, s.dice, s.cube, s.owner, s.cube_enabled, s.result)


def may_double(state: BGState, seat: int) -> bool:
    """Whether ``seat`` may double before its roll: the cube in play, centred or its own and
    below 64, and not the Crawford game of a match."""
    return (
        state.cube_enabled
        and state.cube < MAX_CUBE
        and (state.owner is None or state.owner == seat)
        and not (state.match is not None and state.match.crawford)
    )


def decode_position_id(text: str) -> tuple[Board, Board]:
    """(on-roll counts, other counts) from a Position ID; :class:`InvalidPositionError` if bad."""

    def bad(reason: str) -> InvalidPositionError:
        return InvalidPositionError(f"backgammon: Position ID {text!r} is invalid: {reason}")

    if not isinstance(text, str) or len(text) != 14:
        raise bad("it must be exactly 14 characters")
    if any(c not in _B64 for c in text):
        raise bad("it must use only the base64 characters A-Z a-z 0-9 + /")
    if _B64.index(text[13]) & 0x0F:
        raise bad("its last character carries bits beyond the 80-bit key")
    raw = base64.b64decode(text + "==")
    val = int.from_bytes(raw, "little")
    pos = 0
    sides: list[list[int]] = []
    for _ in range(2):
        counts = [0] * 26
        for i in range(1, 26):
            c = 0
            while True:
                if pos >= 80:
                    raise bad("the key runs out of bits (too many checkers)")
                bit = (val >> pos) & 1
                pos += 1
                if not bit:
                    break
                c += 1
            counts[i] = c
        total = sum(counts)
        if total > CHECKERS:
            raise bad(f"a side has {total} checkers, more than {CHECKERS}")
        counts[OFF] = CHECKERS - total
        sides.append(counts)
    if val >> pos:
        raise bad("the bits after the last point are not zero")
    other, on_roll = sides
    for p in range(1, 25):
        if on_roll[p] and other[25 - p]:
            raise bad(f"point {p} of the player on roll is held by both sides")
    if on_roll[OFF] == CHECKERS and other[OFF] == CHECKERS:
        raise bad("both sides have borne off every checker")
    return tuple(on_roll), tuple(other)


def _all_home(me: Sequence[int]) -> bool:
    for i in range(7, 26):
        if me[i]:
            return False
    return True


def generate_plays(me: Board, opp: Board, d1: int, d2: int) -> list[tuple[Play, Board, Board]]:
    """Every legal play for dice ``d1``-``d2`` with its resulting counts (mover's side first).

    ``me`` and ``opp`` are each from their owner's side (as :func:`boards_for_mover`). One play
    per distinct resulting position, in a stable order; ``[((), me, opp)]`` when nothing moves.
    """
    m = list(me)
    o = list(opp)
    hi, lo = (d1, d2) if d1 >= d2 else (d2, d1)
    doubles = hi == lo
    found: dict[tuple[Board, Board], tuple[Play, Board, Board]] = {}
    best = [-1]
    steps: list[Step] = []

    def record(score: int) -> None:
        if score < best[0]:
            return
        if score > best[0]:
            best[0] = score
            found.clear()
        mt = tuple(m)
        ot = tuple(o)
        k = (mt, ot)
        if k not in found:
            found[k] = (tuple(steps), mt, ot)

    def rec(seq: tuple[int, ...], i: int, top: int) -> None:
        d = seq[i]
        moved = False
        if m[BAR]:
            sources: Sequence[int] = (BAR,)
        else:
            sources = range(min(top, 24), 0, -1)
        home = -1  # unknown yet
        for p in sources:
            if not m[p]:
                continue
            t = p - d
            if t > 0:
                opp_pt = 25 - t
                oc = o[opp_pt]
                if oc >= 2:
                    continue
                m[p] -= 1
                m[t] += 1
                if oc:
                    o[opp_pt] = 0
                    o[BAR] += 1
                steps.append((p, t))
                moved = True
                if i + 1 < len(seq):
                    rec(seq, i + 1, p if doubles else 25)
                else:
                    record(_score(i + 1, seq, hi, doubles))
                steps.pop()
                if oc:
                    o[BAR] -= 1
                    o[opp_pt] = 1
                m[t] -= 1
                m[p] += 1
            else:
                if home < 0:
                    home = 1 if _all_home(m) else 0
                if not home:
                    break
                if t < 0 and p != _highest(m):
                    continue
                m[p] -= 1
                m[OFF] += 1
                steps.append((p, OFF))
                moved = True
                if i + 1 < len(seq) and m[OFF] < CHECKERS:
                    rec(seq, i + 1, p if doubles else 25)
                else:
                    record(_score(i + 1, seq, hi, doubles))
                steps.pop()
                m[OFF] -= 1
                m[p] += 1
        if not moved:
            record(_score(i, seq, hi, doubles))

    if doubles:
        rec((hi, hi, hi, hi), 0, 25)
    else:
        rec((hi, lo), 0, 25)
        rec((lo, hi), 0, 25)
    return list(found.values())


def _highest(m: Sequence[int]) -> int:
    for p in range(6, 0, -1):
        if m[p]:
            return p
    return 0


def _score(n: int, seq: tuple[int, ...], hi: int, doubles: bool) -> int:
    """How good a leaf that used ``n`` dice of ``seq`` is: more dice; then the larger die."""
    if doubles:
        return n
    if n == 2:
        return 3
    if n == 1:
        return 2 if seq[0] == hi else 1
    return 0


def _step_die(me: Sequence[int], opp: Sequence[int], f: int, t: int, d: int) -> bool:
    """Whether the single step ``f``->``t`` with die ``d`` is legal for ``me`` now."""
    if not 1 <= f <= 25 or not me[f]:
        return False
    if me[BAR] and f != BAR:
        return False
    dest = f - d
    if dest > 0:
        return t == dest and opp[25 - dest] < 2
    if t != OFF or not _all_home(me):
        return False
    return dest == 0 or _highest(me) == f


def _do_step(me: list[int], opp: list[int], f: int, t: int) -> None:
    me[f] -= 1
    me[t] += 1
    if t > 0 and opp[25 - t] == 1:
        opp[25 - t] = 0
        opp[BAR] += 1


def _apply_steps(me: Board, opp: Board, play: Play) -> tuple[Board, Board]:
    m = list(me)
    o = list(opp)
    for f, t in play:
        _do_step(m, o, f, t)
    return tuple(m), tuple(o)


def _format_point(p: int) -> str:
    return "bar" if p == BAR else "off" if p == OFF else str(p)


def format_play(opp: Board, play: Play) -> str:
    """gnubg's FormatMove: chained checkers, ``*`` for hits, ``(n)`` for repeats."""
    if not play:
        return NO_PLAY
    moves = sorted(play, key=lambda s: (-s[0], -s[1]))
    chains: list[list[int]] = [[f, t] for f, t in moves]
    used = [False] * len(chains)
    for i in range(len(chains)):
        if used[i]:
            continue
        for j in range(i + 1, len(chains)):
            if used[j]:
                continue
            if chains[i][-1] == chains[j][0]:
                dest = chains[i][-1]
                if dest and opp[25 - dest]:
                    chains[i].append(chains[j][1])  # hit: keep the intermediate point
                else:
                    chains[i][-1] = chains[j][1]
                used[j] = True
    live = [c for c, u in zip(chains, used) if not u]
    groups: list[list[int]] = []
    counts: list[int] = []
    for c in live:
        for gi, g in enumerate(groups):
            if g == c:
                counts[gi] += 1
                break
        else:
            groups.append(c)
            counts.append(1)
    hit_mask = 0
    parts: list[str] = []
    for g, n in zip(groups, counts):
        s = _format_point(g[0])
        for mid in g[1:-1]:
            s += "/" + _format_point(mid) + "*"
            hit_mask |= 1 << mid
        dest = g[-1]
        s += "/" + _format_point(dest)
        if dest and opp[25 - dest] and not hit_mask >> dest & 1:
            s += "*"
            hit_mask |= 1 << dest
        if n > 1:
            s += f"({n})"
        parts.append(s)
    return " ".join(parts)


NO_PLAY = "(no play)"
_NO_PLAY_TEXTS = {"(no play)", "no play", "(no move)", "no move", "none"}
_TOKEN = re.compile(r"^(bar|b|off|o|\d{1,2})((?:/(?:bar|b|off|o|\d{1,2})\*?)+)(?:\((\d)\))?$")
_POINT = re.compile(r"/(bar|b|off|o|\d{1,2})\*?")


def _read_point(text: str, whole: str) -> int:
    if text in ("bar", "b"):
        return BAR
    if text in ("off", "o"):
        return OFF
    p = int(text)
    if not 0 <= p <= 25:
        raise InvalidMoveError(f"backgammon: move {whole!r}: point {text} is not 0..25")
    return p


def _parse_chains(text: str) -> list[list[int]]:
    """The checker paths of a play text, repeats expanded; :class:`InvalidMoveError` if bad."""
    chains: list[list[int]] = []
    tokens = text.replace(",", " ").lower().split()
    if not tokens:
        raise InvalidMoveError(f"backgammon: move {text!r} is empty (write {NO_PLAY!r})")
    for tok in tokens:
        mt = _TOKEN.match(tok)
        if not mt:
            raise InvalidMoveError(
                f"backgammon: move {text!r}: cannot read {tok!r}; write steps like "
                "'24/18*/13 8/5(2) bar/22 6/off', or an action: roll, double, take, drop"
            )
        path = [_read_point(mt.group(1), text)]
        path += [_read_point(x, text) for x in _POINT.findall(mt.group(2))]
        for a, b in itertools.pairwise(path):
            if b >= a or a == OFF or b == BAR:
                raise InvalidMoveError(
                    f"backgammon: move {text!r}: {tok!r} must go from higher points to lower"
                )
        n = int(mt.group(3)) if mt.group(3) else 1
        if not 1 <= n <= 4:
            raise InvalidMoveError(f"backgammon: move {text!r}: repeat ({n}) must be 1..4")
        chains.extend([list(path)] * n)
    return chains


def _expand_chains(me: Board, opp: Board, dice: tuple[int, int], chains: list[list[int]]) -> Play:
    """Single-die steps walking every chain with the dice; a naive split if none is legal.

    An elided point (``24/13``) is first walked without hitting there, as gnubg writes a hit
    on the way (``24/18*/13``); failing that, hits on the way are allowed.
    """
    if len(chains) <= 4:
        for mid_hits in (False, True):
            found = _walk_chains(me, opp, dice, chains, mid_hits)
            if found is not None:
                return found
    return tuple((a, b) for c in chains for a, b in itertools.pairwise(c))


def _walk_chains(
    me: Board, opp: Board, dice: tuple[int, int], chains: list[list[int]], mid_hits: bool
) -> Play | None:
    pool = [dice[0]] * 4 if dice[0] == dice[1] else [dice[0], dice[1]]
    m = list(me)
    o = list(opp)
    cur = [c[0] for c in chains]
    nxt = [1 for _ in chains]
    steps: list[Step] = []

    def done() -> bool:
        return all(nxt[k] == len(chains[k]) for k in range(len(chains)))

    def search() -> bool:
        if done():
            return True
        for k in range(len(chains)):
            if nxt[k] == len(chains[k]):
                continue
            f = cur[k]
            target = chains[k][nxt[k]]
            for di, d in enumerate(pool):
                if di and d in pool[:di]:
                    continue
                dest = f - d
                if target == OFF:
                    t = max(dest, 0)
                elif dest < target:
                    continue
                else:
                    t = dest
                if not _step_die(m, o, f, t, d):
                    continue
                hit = t > 0 and o[25 - t] == 1
                if hit and not mid_hits and t != target:
                    continue
                _do_step(m, o, f, t)
                pool.pop(di)
                steps.append((f, t))
                cur[k] = t
                advanced = t == target
                if advanced:
                    nxt[k] += 1
                if search():
                    return True
                if advanced:
                    nxt[k] -= 1
                cur[k] = f
                steps.pop()
                pool.insert(di, d)
                m[t] -= 1
                m[f] += 1
                if hit:
                    o[BAR] -= 1
                    o[25 - t] = 1
        return False

    return tuple(steps) if search() else None


def _reach(me: Board, opp: Board, dice: tuple[int, int], play: Play) -> set[tuple[Board, Board]]:
    """The positions ``play`` can reach as a sequence of legal single-die steps."""
    pool = (dice[0],) * 4 if dice[0] == dice[1] else (dice[0], dice[1])
    out: set[tuple[Board, Board]] = set()

    def walk(m: list[int], o: list[int], i: int, left: tuple[int, ...]) -> None:
        if i == len(play):
            out.add((tuple(m), tuple(o)))
            return
        f, t = play[i]
        for di, d in enumerate(left):
            if d in left[:di]:
                continue
            if _step_die(m, o, f, t, d):
                m2, o2 = list(m), list(o)
                _do_step(m2, o2, f, t)
                walk(m2, o2, i + 1, left[:di] + left[di + 1 :])

    if len(play) <= len(pool):
        walk(list(me), list(opp), 0, pool)
    return out


# --- the game -------------------------------------------------------------------------------


class Backgammon(Game[BGState, Move]):
    id = "backgammon"
    title = "Backgammon"
    has_chance = True

    # positions

    def initial(self, options: Mapping[str, Any] | None = None) -> BGState:
        check_options(self.id, options, {"cube", "match_to"})
        enabled = True
        if options and "cube" in options:
            enabled = options["cube"]
            if not isinstance(enabled, bool):
                raise InvalidInputError(
                    f"backgammon: option 'cube' must be true or false, got {enabled!r}"
                )
        match = None
        if options and options.get("match_to") is not None:
            n = options["match_to"]
            if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_MATCH:
                raise InvalidInputError(
                    f"backgammon: option 'match_to' must be an integer from 1 to {MAX_MATCH} "
                    f"(or null for money play), got {n!r}"
                )
            match = Match(n)
        return BGState((START, START), 0, "opening", cube_enabled=enabled, match=match)

    def parse_position(self, text: str) -> BGState:
        on_roll, other = decode_position_id(text)
        boards = (on_roll, other)
        if on_roll[OFF] == CHECKERS:
            return BGState(boards, 0, "over", result=_outcome_for(0, other, 1))
        if other[OFF] == CHECKERS:
            return BGState(boards, 0, "over", result=_outcome_for(1, on_roll, 1))
        return BGState(boards, 0, "dice")

    def position_text(self, state: BGState) -> str:
        return position_id(state)

    def record_formats(self) -> Sequence[RecordFormat]:
        """``mat``: GNU Backgammon's match file (:mod:`tablas.engine.games.backgammon_mat`)."""
        return (MAT,)

    def key(self, state: BGState) -> Hashable:
        return state.key()

    def state_to_json(self, state: BGState) -> JSON:
        m = state.match
        last = None if m is None or m.last_game is None else m.last_game.to_json()
        return {
            "notation": position_id(state),
            "turn": None if state.phase == "opening" else state.turn,
            "phase": state.phase,
            "dice": list(state.dice) if state.dice else None,
            "board": [list(state.boards[0]), list(state.boards[1])],
            "cube": {"value": state.cube, "owner": state.owner, "enabled": state.cube_enabled},
            "pips": [pip_count(state, 0), pip_count(state, 1)],
            "match_to": None if m is None else m.match_to,
            "score": [0, 0] if m is None else list(m.score),
            "crawford": m is not None and m.crawford,
            "game_number": 1 if m is None else m.game,
            "last_game": last,
        }

    def stake(self, state: BGState) -> int:
        """A game ended by resignation, timeout or abandonment is worth the cube; in a match
        the whole match goes: the winner's score becomes ``match_to``."""
        return state.match.match_to if state.match is not None else state.cube

    # rules

    def to_move(self, state: BGState) -> int | None:
        phase = state.phase
        if phase in ("move", "roll"):
            return state.turn
        if phase == "take":
            return 1 - state.turn
        return None

    def outcome(self, state: BGState) -> Outcome | None:
        return state.result

    def plays(self, state: BGState) -> list[tuple[Play, Board, Board]]:
        """The plays of a ``move`` state with their resulting (mover, opponent) counts."""
        assert state.dice is not None
        me, opp = state.boards[state.turn], state.boards[1 - state.turn]
        return generate_plays(me, opp, state.dice[0], state.dice[1])

    def legal_moves(self, state: BGState) -> list[Move]:
        phase = state.phase
        if phase == "move":
            return [p for p, _, _ in self.plays(state)]
        if phase == "roll":
            return ["roll", "double"]
        if phase == "take":
            return ["take", "drop"]
        return []

    def successors(self, state: BGState) -> list[tuple[Move, BGState]]:
        if state.phase == "move":
            return [(p, self._after_play(state, me, opp)) for p, me, opp in self.plays(state)]
        return super().successors(state)

    def _after_play(self, state: BGState, me: Board, opp: Board) -> BGState:
        turn = state.turn
        nxt = 1 - turn
        boards = (me, opp) if turn == 0 else (opp, me)
        if me[OFF] == CHECKERS:
            return _game_over(state, boards, nxt, _outcome_for(turn, opp, state.cube))
        return BGState(
            boards,
            nxt,
            "roll" if may_double(state, nxt) else "dice",
            None,
            state.cube,
            state.owner,
            state.cube_enabled,
            match=state.match,
        )

    def resignation(self, state: BGState, seat: int, points: int) -> Resignation:
        """``seat``'s resignation of the current game for ``points`` (1, 2 or 3) times the
        cube, checked: the game is being played (not over, no roll pending). Applying it
        ends the game; :class:`IllegalMoveError` says why it cannot be offered."""
        if state.result is not None:
            raise GameOverError("backgammon: the game is over: there is nothing to resign")
        if seat not in (0, 1) or points not in RESIGN_VALUES:
            raise IllegalMoveError(
                f"backgammon: a resignation is seat 0 or 1 giving up 1, 2 or 3 points times"
                f" the cube, got seat {seat!r}, points {points!r}")
        if self.is_chance(state):
            raise IllegalMoveError("backgammon: the dice are being rolled: resign after them")
        return Resignation(seat, points)

    def check_action(self, state: BGState, move: Move) -> Move:
        """A record's action: a legal move, or a resignation that could be offered here."""
        if isinstance(move, Resignation):
            return self.resignation(state, move.seat, move.points)
        return self.check_move(state, move)

    def actor(self, state: BGState, move: Move) -> int | None:
        """A resignation is its resigner's, whoever is on roll."""
        if isinstance(move, Resignation):
            return move.seat
        return self.to_move(state)

    def apply(self, state: BGState, move: Move) -> BGState:
        if isinstance(move, Resignation):
            won = Outcome(1 - move.seat, move.points * state.cube, "resign")
            return _game_over(state, state.boards, state.turn, won)
        if isinstance(move, str):
            s = state
            if move == "roll":
                return BGState(s.boards, s.turn, "dice", None, s.cube, s.owner, s.cube_enabled,
                               match=s.match)
            if move == "double":
                return BGState(s.boards, s.turn, "take", None, s.cube, s.owner, s.cube_enabled,
                               match=s.match)
            if move == "take":
                return BGState(
                    s.boards, s.turn, "dice", None, 2 * s.cube, 1 - s.turn, s.cube_enabled,
                    match=s.match,
                )
            if move == "drop":
                return _game_over(s, s.boards, s.turn, Outcome(s.turn, s.cube, "drop"))
            raise InvalidMoveError(f"backgammon: unknown action {move!r}")
        me, opp = _apply_steps(state.boards[state.turn], state.boards[1 - state.turn], move)
        return self._after_play(state, me, opp)

    def _illegal(self, state: BGState, move: Any, why: str = "") -> IllegalMoveError:
        dice = f"{state.dice[0]}{state.dice[1]}" if state.dice else "none"
        return IllegalMoveError(
            f"backgammon: illegal move {self.move_repr(move)} in position "
            f"{position_id(state)!r} (phase {state.phase}, dice {dice}){why}"
        )

    def check_move(self, state: BGState, move: Move) -> Move:
        if state.result is not None:
            raise GameOverError(
                f"backgammon: move {self.move_repr(move)} after the end of the game "
                f"in position {position_id(state)!r}"
            )
        if isinstance(move, Resignation):
            raise self._illegal(state, move, ": a resignation is offered with resign and"
                                " applied when the other side accepts it, never moved")
        if isinstance(move, str):
            if move in self.legal_moves(state):
                return move
            raise self._illegal(state, move)
        if state.phase != "move" or state.dice is None or not isinstance(move, tuple):
            raise self._illegal(state, move)
        plays = self.plays(state)
        by_result = {(mt, ot): p for p, mt, ot in plays}
        for p, _, _ in plays:
            if p == move:
                return p
        me, opp = state.boards[state.turn], state.boards[1 - state.turn]
        try:
            steps = tuple((int(f), int(t)) for f, t in move)
        except (TypeError, ValueError):
            raise self._illegal(state, move) from None
        for res in _reach(me, opp, state.dice, steps):
            if res in by_result:
                return by_result[res]
        raise self._illegal(state, move)

    # chance

    def is_chance(self, state: BGState) -> bool:
        return state.phase in ("opening", "dice")

    def chance_outcomes(self, state: BGState) -> Sequence[tuple[Any, float]]:
        if state.phase == "opening":
            return OPENING_OUTCOMES
        if state.phase == "dice":
            return DICE_OUTCOMES
        return ()

    def _check_dice(self, state: BGState, outcome: Any) -> tuple[int, int]:
        ok = (
            isinstance(outcome, tuple | list)
            and len(outcome) == 2
            and all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 6 for d in outcome)
        )
        if not ok:
            raise InvalidDiceError(
                f"backgammon: roll {outcome!r} must be two dice 1..6 "
                f"(position {position_id(state)!r})"
            )
        return int(outcome[0]), int(outcome[1])

    def apply_chance(self, state: BGState, outcome: Any) -> BGState:
        s = state
        if s.phase == "opening":
            d0, d1 = self._check_dice(s, outcome)
            if d0 == d1:
                raise InvalidDiceError(
                    f"backgammon: opening roll {d0}{d1}: the dice must differ (ties re-roll)"
                )
            turn = 0 if d0 > d1 else 1
            return BGState(
                s.boards,
                turn,
                "move",
                (max(d0, d1), min(d0, d1)),
                s.cube,
                s.owner,
                s.cube_enabled,
                match=s.match,
            )
        if s.phase == "dice":
            a, b = self._check_dice(s, outcome)
            return BGState(
                s.boards, s.turn, "move", (max(a, b), min(a, b)), s.cube, s.owner, s.cube_enabled,
                match=s.match,
            )
        raise InvalidDiceError(
            f"backgammon: no dice to roll in phase {s.phase!r} (position {position_id(s)!r})"
        )

    def parse_chance(self, state: BGState, text: str) -> Any:
        if state.phase not in ("opening", "dice"):
            raise InvalidDiceError(
                f"backgammon: dice {text!r} given, but no roll is due (phase {state.phase!r})"
            )
        if not isinstance(text, str) or len(text) != 2 or any(c not in "123456" for c in text):
            raise InvalidDiceError(f"backgammon: dice {text!r} must be two digits 1-6, e.g. 31")
        a, b = int(text[0]), int(text[1])
        if state.phase == "opening":
            if a == b:
                raise InvalidDiceError(
                    f"backgammon: opening dice {text!r}: seat 0's and seat 1's dice must differ"
                )
            return (a, b)
        return (max(a, b), min(a, b))

    def chance_text(self, outcome: Any) -> str:
        a, b = outcome
        return f"{a}{b}"

    # notations

    def is_play(self, move: Move) -> bool:
        # "roll", "double", "take", "drop" and a resignation are no plays
        return not isinstance(move, str | Resignation)

    def move_to_json(self, move: Move) -> JSON:
        if isinstance(move, Resignation):
            return {"action": "resign", "seat": move.seat, "points": move.points}
        if isinstance(move, str):
            return {"action": move}
        return {"play": [[f, t] for f, t in move]}

    def move_from_json(self, state: BGState, obj: Any) -> Move:
        def bad(why: str) -> InvalidMoveError:
            return InvalidMoveError(f"backgammon: move {obj!r} {why}")

        if isinstance(obj, dict) and obj.get("action") == "resign":
            return self._resignation_from_json(obj)
        if not isinstance(obj, dict) or len(obj) != 1:
            raise bad('must be {"play": [[from, to], ...]} or {"action": "roll"|...}')
        if "action" in obj:
            a = obj["action"]
            if not isinstance(a, str) or a not in ACTIONS:
                raise bad(f"has an unknown action; known: {', '.join(ACTIONS)}")
            return a
        if "play" not in obj:
            raise bad('must be {"play": [[from, to], ...]} or {"action": "roll"|...}')
        steps = obj["play"]
        if not isinstance(steps, list) or len(steps) > 4:
            raise bad("'play' must be a list of at most 4 [from, to] pairs")
        out: list[Step] = []
        for st in steps:
            if not isinstance(st, list) or len(st) != 2:
                raise bad("'play' must be a list of [from, to] pairs")
            for x in st:
                if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= 25:
                    raise bad("points must be integers 0..25")
            out.append((st[0], st[1]))
        return tuple(out)

    @staticmethod
    def _resignation_from_json(obj: dict[str, Any]) -> Resignation:
        seat, points = obj.get("seat"), obj.get("points")
        if (set(obj) != {"action", "seat", "points"} or seat not in (0, 1)
                or points not in RESIGN_VALUES or isinstance(seat, bool)
                or isinstance(points, bool)):
            raise InvalidMoveError(
                f'backgammon: move {obj!r} must be {{"action": "resign", "seat": 0|1,'
                f' "points": 1|2|3}}')
        assert isinstance(seat, int) and isinstance(points, int)
        return Resignation(seat, points)

    def move_text(self, state: BGState, move: Move) -> str:
        if isinstance(move, Resignation):
            return f"resigns a {RESIGN_VALUES[move.points]}"
        if isinstance(move, str):
            return move
        return format_play(state.boards[1 - state.turn], move)

    def parse_move(self, state: BGState, text: str) -> Move:
        if not isinstance(text, str):
            raise InvalidMoveError(f"backgammon: move {text!r} must be text")
        t = text.strip().lower()
        if t.startswith("resign"):
            raise InvalidMoveError(
                f"backgammon: {text!r}: a resignation is offered with resign and accepted by"
                " the other side, never written as a move")
        if t in ACTIONS:
            return t
        if t in ("pass", "reject"):
            return "drop"
        if t == "accept":
            return "take"
        if t in _NO_PLAY_TEXTS:
            return ()
        chains = _parse_chains(text)
        if len(chains) > 4:
            raise InvalidMoveError(f"backgammon: move {text!r} has more than 4 checker moves")
        if state.phase == "move" and state.dice is not None:
            me, opp = state.boards[state.turn], state.boards[1 - state.turn]
            return _expand_chains(me, opp, state.dice, chains)
        return tuple((a, b) for c in chains for a, b in itertools.pairwise(c))
