"""Backgammon's texts: the GNU Backgammon Position ID read (:func:`decode_position_id`; the
writer is :mod:`tablas.engine.games.backgammon_state`'s), plays written and read as gnubg
writes them (:func:`format_play`, :func:`parse_chains`, :func:`expand_chains`), and moves read
from the protocol's JSON (:func:`move_from_json`)."""

from __future__ import annotations

import base64
import itertools
import re
from typing import Any

from tablas.engine.errors import InvalidDiceError, InvalidMoveError, InvalidPositionError
from tablas.engine.games.backgammon_plays import do_step, step_die
from tablas.engine.games.backgammon_state import (
    BAR,
    CHECKERS,
    OFF,
    RESIGN_VALUES,
    Board,
    Play,
    Resignation,
    Step,
)

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
ACTIONS: tuple[str, ...] = ("roll", "double", "take", "drop")


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
NO_PLAY_TEXTS = {"(no play)", "no play", "(no move)", "no move", "none"}
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


def parse_chains(text: str) -> list[list[int]]:
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


def expand_chains(me: Board, opp: Board, dice: tuple[int, int], chains: list[list[int]]) -> Play:
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
                if not step_die(m, o, f, t, d):
                    continue
                hit = t > 0 and o[25 - t] == 1
                if hit and not mid_hits and t != target:
                    continue
                do_step(m, o, f, t)
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


def move_from_json(obj: Any) -> Play | str | Resignation:
    """A move as the protocol writes it: ``{"play": [[from, to], …]}``, ``{"action": A}`` or
    a resignation ``{"action": "resign", "seat", "points"}``; :class:`InvalidMoveError`
    saying the shape otherwise (legality is the game's to check)."""
    def bad(why: str) -> InvalidMoveError:
        return InvalidMoveError(f"backgammon: move {obj!r} {why}")

    if isinstance(obj, dict) and obj.get("action") == "resign":
        return _resignation_from_json(obj)
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


def parse_move(text: str, boards: tuple[Board, Board] | None,
               dice: tuple[int, int] | None) -> Play | str:
    """A move as gnubg writes it (``24/18 13/11``, ``bar/22*``, ``8/4(2)``, ``(no play)``) or
    an action (``roll``, ``double``, ``take``/``accept``, ``drop``/``pass``/``reject``). With
    the mover's and the opponent's ``boards`` and the ``dice`` (a play is due), a chain such as
    ``24/13`` is expanded into the steps the dice make."""
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
    if t in NO_PLAY_TEXTS:
        return ()
    chains = parse_chains(text)
    if len(chains) > 4:
        raise InvalidMoveError(f"backgammon: move {text!r} has more than 4 checker moves")
    if boards is not None and dice is not None:
        return expand_chains(boards[0], boards[1], dice, chains)
    return tuple((a, b) for c in chains for a, b in itertools.pairwise(c))


def parse_dice(text: str, opening: bool) -> tuple[int, int]:
    """A roll as two digits 1-6 (``31``): the opening roll as seat 0's and seat 1's dice
    (which differ), any other the larger die first."""
    if not isinstance(text, str) or len(text) != 2 or any(c not in "123456" for c in text):
        raise InvalidDiceError(f"backgammon: dice {text!r} must be two digits 1-6, e.g. 31")
    a, b = int(text[0]), int(text[1])
    if opening:
        if a == b:
            raise InvalidDiceError(
                f"backgammon: opening dice {text!r}: seat 0's and seat 1's dice must differ"
            )
        return (a, b)
    return (max(a, b), min(a, b))
