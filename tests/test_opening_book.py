"""The opening book: every entry a legal play of the start position, for either seat."""

from __future__ import annotations

import pytest
from tablas.engine.games.backgammon import START, Backgammon, BGState, generate_plays
from tablas.engine.search.opening_book import ALTERNATIVES, BOOK, book_play, book_text, is_opening

G = Backgammon()
ROLLS = [(a, b) for a in range(2, 7) for b in range(1, a)]


def opening(hi: int, lo: int, seat: int) -> BGState:
    """The start position after the opening roll, ``seat`` to play ``hi``-``lo``."""
    s = G.initial()
    return G.apply_chance(s, (hi, lo) if seat == 0 else (lo, hi))


def test_book_has_the_15_rolls() -> None:
    assert sorted(BOOK) == sorted(ROLLS)
    assert set(ALTERNATIVES) <= set(BOOK)


@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("roll", ROLLS)
def test_every_entry_is_a_listed_legal_play(roll: tuple[int, int], seat: int) -> None:
    s = opening(*roll, seat)
    assert s.turn == seat and s.phase == "move" and is_opening(s)
    play = book_play(s)
    assert play is not None
    plays = G.legal_moves(s)
    assert play in plays  # the very object from the move list, not just an equal result
    assert G.check_move(s, play) == play
    assert G.move_text(s, play) == BOOK[roll]
    assert book_text(s) == BOOK[roll]
    # The play leaves the position the text describes.
    results = {p: m for p, m, _ in generate_plays(START, START, *roll)}
    after = list(START)
    for chain in BOOK[roll].split():
        a, b = (int(x) for x in chain.split("/"))
        after[a] -= 1
        after[b] += 1
    assert results[play] == tuple(after)


@pytest.mark.parametrize("roll", sorted(ALTERNATIVES))
def test_alternatives_are_legal(roll: tuple[int, int]) -> None:
    s = opening(*roll, 0)
    for text in ALTERNATIVES[roll]:
        play = G.check_move(s, G.parse_move(s, text))
        assert play in G.legal_moves(s)
        assert play != book_play(s)


def test_seats_get_the_same_play() -> None:
    for roll in ROLLS:
        assert book_play(opening(*roll, 0)) == book_play(opening(*roll, 1))


def test_not_in_the_book() -> None:
    # Before the opening roll, or waiting to roll: no dice to play.
    assert book_play(G.initial()) is None
    assert book_play(BGState((START, START), 0, "dice")) is None
    # A double from the start position (a parsed position rolls doubles too): not covered.
    s = G.apply_chance(BGState((START, START), 0, "dice"), (3, 3))
    assert s.phase == "move" and book_play(s) is None
    # The start position reached by parsing its Position ID, then a non-double: covered.
    parsed = G.apply_chance(G.parse_position("4HPwATDgc/ABMA"), (4, 3))
    assert book_play(parsed) == book_play(opening(4, 3, 0))
    # After the first play the position is no longer the start: the reply is not covered.
    s = opening(3, 1, 0)
    play = book_play(s)
    assert play is not None
    after = G.apply(s, play)
    if after.phase == "roll":
        after = G.apply(after, "roll")
    reply = G.apply_chance(after, (6, 4))
    assert reply.phase == "move" and book_play(reply) is None
    # Any other position with a roll to play.
    other = G.apply_chance(G.parse_position("DWfwAyCMc8oBRA"), (2, 1))
    assert book_play(other) is None
