"""Who shared an address (contract section 16), below the sockets: random sightings of players
at addresses and times, the server's AddressBook on a real SQLite store, against the rule
computed here in plain Python (two players share an address when both were seen at it within
the last 30 days; an exempt key is never recorded); and the sweep forgets exactly what is
older than the window."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given, settings
from hypothesis import strategies as st
from tablas.server.addresses import ADDRESS_WINDOW, AddressBook
from tablas.server.store import SqliteStore

PLAYERS = ["pa", "pb", "pc", "pd"]
# Keys as AddressKeys makes them: IPv4, an IPv6 /64, a vouched-for connection (exempt).
ADDRESSES = ["203.0.113.7", "203.0.113.8", "2001:db8:1:2::/64", "198.51.100.1#17"]
DAY = 86400.0

sightings = st.lists(
    st.tuples(st.sampled_from(PLAYERS), st.sampled_from(ADDRESSES),
              st.floats(min_value=0, max_value=90 * DAY, allow_nan=False)),
    max_size=12)


def expected_shared(seen: list[tuple[str, str, float]], a: str, b: str, now: float) -> bool:
    """The rule in plain words: some address, not exempt, where both were last seen within
    the window (each sighting counts on its own; the latest is what matters)."""
    recent = {(p, addr) for p, addr, t in seen
              if t >= now - ADDRESS_WINDOW and "#" not in addr}
    return a != b and any((a, addr) in recent and (b, addr) in recent for addr in ADDRESSES)


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


async def _check(folder: Path, seen: list[tuple[str, str, float]], now: float) -> None:
    store = await SqliteStore.open(folder / "t.db")
    try:
        clock = Clock()
        book = AddressBook(store, clock)
        for player, address, t in seen:
            clock.t = t
            await book.seen(player, address)
        clock.t = now
        for a, b in itertools.product(PLAYERS, repeat=2):
            assert await book.shared(a, b) == expected_shared(seen, a, b, now), (a, b)
        kept = {(p, addr) for p, addr, _ in seen if "#" not in addr}
        old = {(p, addr) for p, addr in kept
               if max(t for q, x, t in seen if (q, x) == (p, addr)) < now - ADDRESS_WINDOW}
        assert await book.forget_old() == len(old)
        left = [h for p in PLAYERS for h in await store.addresses.hashes_of(p)]
        assert len(left) == len(kept) - len(old)
        # Forgetting changes no answer.
        for a, b in itertools.product(PLAYERS, repeat=2):
            assert await book.shared(a, b) == expected_shared(seen, a, b, now), (a, b)
    finally:
        await store.close()


@settings(max_examples=40, deadline=None)
@given(sightings, st.floats(min_value=0, max_value=120 * DAY, allow_nan=False))
def test_shared_is_the_rule_and_the_sweep_forgets_only_the_old(
        seen: list[tuple[str, str, float]], now: float) -> None:
    with TemporaryDirectory() as folder:
        asyncio.run(_check(Path(folder), seen, now))


def test_the_window_is_thirty_days() -> None:
    assert ADDRESS_WINDOW == 30 * DAY
