"""An opening book for backgammon: the rollout-best play of each of the 15 opening rolls.

The first play of a game is from the start position with a non-double roll (ties of the opening
roll are re-rolled). Long computer rollouts settled these plays for the money game (cube in
play, no Jacoby): the table below is the money-play column of eXtreme Gammon 2's opening book,
which agrees with GNU Backgammon's rollouts except where noted. Several rolls have a close
runner-up, within about 0.01 of equity, noted in ``ALTERNATIVES``.

====  =================  ==================================================================
roll  play               notes
====  =================  ==================================================================
21    13/11 6/5          slot; the split 24/23 13/11 is very close
31    8/5 6/5            makes the 5-point (the best opening roll)
41    24/23 13/9         split; the slot 13/9 6/5 is 0.007 worse (XG 1.04, 41,670 games)
51    24/23 13/8         split; the slot 13/8 6/5 is 0.010 worse (gnubg, 46,656 games)
61    13/7 8/7           makes the bar point
32    24/21 13/11        split; two down 13/11 13/10 is close
42    8/4 6/4            makes the 4-point
52    13/11 13/8         two down
62    24/18 13/11        split
43    24/20 13/10        split; 13/10 13/9 and 24/21 13/9 are within a few thousandths,
                         and sources differ on their order (the least settled entry)
53    8/3 6/3            makes the 3-point
63    24/18 13/10        split
54    24/20 13/8         split
64    24/18 13/9         split; 8/2 6/2 and the run 24/14 are close (the run is best at
                         double match point, the point at gammon-go)
65    24/13              runs a back checker to the mid-point
====  =================  ==================================================================

Sources (checked with the project's search tool):

* "Starting Out", The Dorbel Daily (22 November 2011),
  https://dorbeldaily.blogspot.com/2011/11/starting-out.html — a table of the plays eXtreme
  Gammon 2's rollout book makes on the opening, by money, DMP, gammon-save and gammon-go
  (money: 65 24/13, 64 24/18 13/9, 63 24/18 13/10; 64 is 24/14 at DMP, 8/2 6/2 at gammon-go).
* Neil Kazaross's XG 1.04 rollout of opening 41, bgonline.org forums, read=148812:
  24/23 13/9 -0.005, 13/9 6/5 -0.012.
* Stick Rice, "Opening 5-1", GammOnLine (2006), http://www.bkgm.com/rgb/rgb.cgi?view+1344:
  full cubeful gnubg rollout, 24/23 13/8 +0.006 against 13/8 6/5 -0.004; and Tom Keith's
  cubeless gnubg rollouts of all the openings, http://www.bkgm.com/openings/rollouts.html.
* Bill Robertie, "Playing the Opening Move" (twoplustwo forum, 2009) for the forced rolls
  31, 42, 53, 61, 65; rec.games.backgammon threads on 43 (bkgm.com rgb view+967, view+1126)
  for how close its three plays are.

:func:`book_play` answers only in the start position (both sides on :data:`START`) with a
non-double roll in the ``move`` phase, for either seat (the start position is symmetric and
boards are from the owner's side). It goes through ``parse_move`` and ``check_move``, so what
it returns is exactly one of the module's legal plays. Replies to the opening are not covered.
"""

from __future__ import annotations

from tablas.engine.games.backgammon import START, Backgammon, BGState, Play

BOOK: dict[tuple[int, int], str] = {
    (2, 1): "13/11 6/5",
    (3, 1): "8/5 6/5",
    (4, 1): "24/23 13/9",
    (5, 1): "24/23 13/8",
    (6, 1): "13/7 8/7",
    (3, 2): "24/21 13/11",
    (4, 2): "8/4 6/4",
    (5, 2): "13/11 13/8",
    (6, 2): "24/18 13/11",
    (4, 3): "24/20 13/10",
    (5, 3): "8/3 6/3",
    (6, 3): "24/18 13/10",
    (5, 4): "24/20 13/8",
    (6, 4): "24/18 13/9",
    (6, 5): "24/13",
}

# Close runners-up (within about 0.01 of equity in the rollouts above), for variety or study.
ALTERNATIVES: dict[tuple[int, int], tuple[str, ...]] = {
    (2, 1): ("24/23 13/11",),
    (3, 2): ("13/11 13/10",),
    (4, 3): ("13/10 13/9", "24/21 13/9"),
    (6, 4): ("8/2 6/2", "24/14"),
}

_GAME = Backgammon()


def is_opening(state: BGState) -> bool:
    """Whether ``state`` is the first play of a game: start position, non-double, to move."""
    return (
        state.phase == "move"
        and state.dice is not None
        and state.dice[0] != state.dice[1]
        and state.boards[0] == START
        and state.boards[1] == START
    )


def book_text(state: BGState) -> str | None:
    """The book play's text (as listed in :data:`BOOK`) for ``state``, or ``None``."""
    if not is_opening(state):
        return None
    assert state.dice is not None
    a, b = state.dice
    return BOOK[(max(a, b), min(a, b))]


def book_play(state: BGState) -> Play | None:
    """The book play for the opening ``state`` as one of its legal plays; ``None`` if the
    state is not the start position with a non-double roll to play."""
    text = book_text(state)
    if text is None:
        return None
    move = _GAME.check_move(state, _GAME.parse_move(state, text))
    assert isinstance(move, tuple)
    return move
