"""GNU Backgammon's ``.mat`` match file (the Jellyfish text format) for a backgammon room.

A money game is written as gnubg writes one: a ``0 point match`` of one game (a match to 1
would be wrong: the cube is dead in it, and the game's points would not fit). A match
(option ``match_to``) is written whole: `` N point match``, then every game in its own
`` Game k`` block whose players' line carries the score before it. gnubg knows the Crawford
game from the score, and its own export marks it with nothing else; so does this one.
``import mat`` reads and replays either. The layout follows gnubg's own export, since gnubg's
reader splits a line into its two players by that layout:

* comment lines ``; [Key "value"]`` (the date, the site, and the rules played here: no
  Jacoby rule, no beavers, the cube up to 64; gnubg 1.07 reads none of them and scores a
  money game with its own Jacoby setting, on by default: ``set jacoby off`` first), then
  `` 0 point match`` and `` Game 1``;
* the players, seat 0 on the left: `` Ana : 0                        Bob : 0`` (a ``:`` in a
  name, which gnubg's reader would take for the end of it, is written ``.``; a name is cut to
  31 bytes of UTF-8, gnubg's limit);
* one numbered line per turn pair, `` 12) `` then seat 0's action in 28 columns, then seat
  1's. An action is a roll and its play, ``52: 13/8 24/22``: the dice (higher first), then
  every checker step in the order played, in the mover's numbering (24..1, ``25`` the bar,
  ``0`` off), ``*`` after a step that hits, nothing after the colon when no checker can move;
  or the cube: `` Doubles => 4``, `` Takes``, `` Drops``. A ``roll`` action is no entry of
  its own: its dice come with the play;
* the result, in the winner's column: `` Wins 2 points`` (the points won: the cube times 1, 2
  or 3, or the cube before a dropped double). gnubg reads a ``Wins`` after a game that did not
  end on the board as the loser's resignation, which is what a resignation, a timeout or an
  abandoned game is here. A game without a winner (``expired``) or not finished has no
  ``Wins`` line: the game so far. A match given away (resignation, timeout, abandonment) is
  written as the resignation of its last game: gnubg's resignation is worth at most a
  backgammon (three times the cube), so its score shows the points that game can give, and
  the room's result stays the server's word that the match is over.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tablas.engine.core import Game, GameRecord, Outcome, RecordFormat

# The state's types, not the rules (engine.games.backgammon): the rules name this writer as
# the game's format, so importing them here would close a circle.
from tablas.engine.games.backgammon_state import BAR, BGState, Match, Play
from tablas.engine.records import Step, start, steps

LEFT = 28  # the columns of seat 0's action, as gnubg writes them
NAME_BYTES = 31  # gnubg keeps a name's first MAX_NAME_LEN - 1 bytes


def mat_name(name: str) -> str:
    """``name`` as the players' line can hold it: no ``:``, at most 31 bytes of UTF-8."""
    clean = name.replace(":", ".").strip() or "?"
    out = clean.encode()[:NAME_BYTES].decode(errors="ignore")
    return out.rstrip() or "?"


def play_text(state: BGState, play: Play) -> str:
    """A play as the ``.mat`` writes it: every step in the order played, ``*`` for a hit."""
    me = list(state.boards[state.turn])
    opp = list(state.boards[1 - state.turn])
    out = []
    for f, t in play:
        hit = 0 < t < BAR and opp[25 - t] == 1
        me[f] -= 1
        me[t] += 1
        if hit:
            opp[25 - t] = 0
            opp[BAR] += 1
        out.append(f"{f}/{t}{'*' if hit else ''}")
    return " ".join(out)


def entry(step: Step) -> tuple[int, str] | None:
    """The ``.mat`` entry of one action with the seat whose column it goes in (None: a
    ``roll``, whose dice are written with the play that follows)."""
    state: BGState = step.before
    seat = step.seat
    assert seat is not None
    move = step.move
    if isinstance(move, tuple):
        assert state.dice is not None
        hi, lo = max(state.dice), min(state.dice)
        return seat, f"{hi}{lo}: {play_text(state, move)}".rstrip()
    if move == "double":
        return seat, f" Doubles => {2 * state.cube}"
    if move == "take":
        return seat, " Takes"
    if move == "drop":
        return seat, " Drops"
    return None


def wins(result: Outcome) -> tuple[int, str]:
    assert result.winner is not None
    s = "" if result.points == 1 else "s"
    return result.winner, f" Wins {result.points} point{s}"


@dataclass
class GameBlock:
    """One game of the file: the match before it (None: a money game), its entries."""

    match: Match | None
    entries: list[tuple[int, str]] = field(default_factory=list)


def games(game: Game[Any, Any], record: GameRecord) -> list[GameBlock]:
    """The room's games in order (``game``: backgammon's rules), each with its entries and its
    ``Wins`` (the game's own result; for the last, the room's when the game did not end on
    the board)."""
    blocks: list[GameBlock] = []
    ended = False
    last: BGState = start(game, record.options, record.opening_rolls)
    for step in steps(game, record):
        before: BGState = step.before
        after: BGState = step.after
        if not blocks or ended:
            blocks.append(GameBlock(before.match))
            ended = False
        found = entry(step)
        if found is not None:
            blocks[-1].entries.append(found)
        m0, m1 = before.match, after.match
        if m0 is not None and m1 is not None and (m1.game != m0.game or after.result):
            assert m1.last_game is not None
            blocks[-1].entries.append(wins(m1.last_game))
            ended = True
        last = after
    if not blocks:
        blocks.append(GameBlock(last.match))
    result = record.result
    if result is None or result.winner is None:
        return blocks
    if last.match is None:  # a money game: its result, on the board or not
        blocks[-1].entries.append(wins(result))
    elif last.result is None:
        # The match given away (its last game's Wins is written above when the match ended
        # on the board): the game being played resigned for as much as the winner needs, or
        # for all it can give (a resignation is a single, a gammon or a backgammon).
        if ended:  # given away before the first action of a new game: that game's
            blocks.append(GameBlock(last.match))
        need = -(-last.match.away(result.winner) // last.cube)
        blocks[-1].entries.append(wins(Outcome(result.winner, min(3, need) * last.cube,
                                               result.reason)))
    return blocks


def actions(game: Game[Any, Any], record: GameRecord) -> list[tuple[int, str]]:
    """Each entry of the room's games, one after the other, with its column's seat."""
    return [e for block in games(game, record) for e in block.entries]


def layout(entries: Sequence[tuple[int, str]]) -> list[str]:
    """The numbered lines: seat 0's entry on the left, seat 1's on the right. An entry that
    finds its column taken starts a line; a line holding a ``Wins`` alone has no number, as
    gnubg writes it."""
    rows: list[list[str | None]] = []
    for seat, text in entries:
        if not rows or rows[-1][seat] is not None or (seat == 0 and rows[-1][1] is not None):
            rows.append([None, None])
        rows[-1][seat] = text
    lines = []
    n = 0
    for left, right in rows:
        alone = [c for c in (left, right) if c is not None]
        if len(alone) == 1 and alone[0].startswith(" Wins"):
            prefix = " " * 5
        else:
            n += 1
            prefix = f"{n:3d}) "
        row = (left or "").ljust(LEFT - 1) + " " + right if right is not None else left or ""
        lines.append((prefix + row).rstrip())
    return lines


def write_mat(game: Game[Any, Any], record: GameRecord) -> str:
    """The ``.mat`` text of ``record`` (finished or not), a game of ``game`` (backgammon's
    rules, as every :class:`RecordFormat` writer is given them)."""
    date = time.strftime("%Y.%m.%d", time.gmtime(record.created_at))
    n0, n1 = (mat_name(n) for n in record.names)
    blocks = games(game, record)
    first = blocks[0].match
    head = [
        '; [Site "Tablas"]',
        f'; [EventDate "{date}"]',
        '; [Variation "Backgammon"]',
        '; [Jacoby "Off"]',
        '; [Beaver "Off"]',
        '; [CubeLimit "64"]',
        "",
        f" {0 if first is None else first.match_to} point match",
    ]
    body: list[str] = []
    for k, block in enumerate(blocks, 1):
        a, b = (0, 0) if block.match is None else block.match.score
        body += ["", f" Game {k}", " " + f"{n0} : {a}".ljust(30) + " " + f"{n1} : {b}",
                 *layout(block.entries)]
    return "\n".join([*head, *body, "", ""])


MAT = RecordFormat("mat", "text/plain; charset=utf-8", "mat", write_mat)
