"""Backgammon's plays: every legal play for a roll (:func:`generate_plays`), one checker step
(:func:`step_die`, :func:`do_step`), a play applied (:func:`apply_steps`) and the positions a
play written in another order reaches (:func:`reach`). Counts are a side's 26 checkers from its
own side (index 0 off, 1..24 points, 25 bar), the mover's and the opponent's; the rules are
:mod:`tablas.engine.games.backgammon`'s docstring."""

from __future__ import annotations

from collections.abc import Sequence

from tablas.engine.games.backgammon_state import BAR, CHECKERS, OFF, Board, Play, Step


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


def step_die(me: Sequence[int], opp: Sequence[int], f: int, t: int, d: int) -> bool:
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


def do_step(me: list[int], opp: list[int], f: int, t: int) -> None:
    me[f] -= 1
    me[t] += 1
    if t > 0 and opp[25 - t] == 1:
        opp[25 - t] = 0
        opp[BAR] += 1


def apply_steps(me: Board, opp: Board, play: Play) -> tuple[Board, Board]:
    m = list(me)
    o = list(opp)
    for f, t in play:
        do_step(m, o, f, t)
    return tuple(m), tuple(o)


def reach(me: Board, opp: Board, dice: tuple[int, int], play: Play) -> set[tuple[Board, Board]]:
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
            if step_die(m, o, f, t, d):
                m2, o2 = list(m), list(o)
                do_step(m2, o2, f, t)
                walk(m2, o2, i + 1, left[:di] + left[di + 1 :])

    if len(play) <= len(pool):
        walk(list(me), list(opp), 0, pool)
    return out
