"""The bot workers' turns (contract section 15, server/bot_turns.py): jobs of many shares
(addresses) for a few slots, checked against the rules written here as a model, apart from
the scheduler: at most ``slots`` run at once, no share holds every slot when there are two or
more, a share's jobs run in the order they came, nothing waits while a slot is free to it, and
the lines are served in turn (no share's job waits behind more than one job of each other
share that came after it)."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st
from tablas.server.bot_turns import FairTurns, RoomShares


class Run:
    """Jobs through a :class:`FairTurns`, each held until the test lets it finish; what
    started, in order, and what each saw."""

    def __init__(self, slots: int) -> None:
        self.turns = FairTurns(slots)
        self.started: list[tuple[str, int]] = []
        self.release: dict[tuple[str, int], asyncio.Event] = {}
        self.most_at_once = 0
        self.most_of_one_share = 0

    async def job(self, share: str, n: int) -> None:
        done = self.release.setdefault((share, n), asyncio.Event())
        async with self.turns.turn(share):
            self.started.append((share, n))
            self.most_at_once = max(self.most_at_once, self.turns.busy)
            self.most_of_one_share = max(self.most_of_one_share, max(self.turns.held.values()))
            await done.wait()

    def running(self) -> list[tuple[str, int]]:
        return [j for j in self.started if not self.release[j].is_set()]


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_share_that_comes_later_waits_behind_one_job_not_the_whole_line() -> None:
    run = Run(2)
    hog = [asyncio.create_task(run.job("A", i)) for i in range(10)]
    await settle()
    # Two slots: the first share holds one, never both (a long decision would hold them).
    assert run.started == [("A", 0)]
    late = asyncio.create_task(run.job("B", 0))
    await settle()
    assert run.started == [("A", 0), ("B", 0)]  # at once: the other slot was kept for it
    run.release[("B", 0)].set()
    await settle()
    assert run.started[-1] == ("A", 1) or run.running() == [("A", 0)]
    for j in list(run.release):
        run.release[j].set()
    await asyncio.gather(*hog, late)
    assert [n for s, n in run.started if s == "A"] == list(range(10))  # in order
    assert run.most_of_one_share == 1 and run.turns.busy == 0 and run.turns.waiting() == 0


async def test_lines_are_served_in_turn_one_slot() -> None:
    run = Run(1)
    tasks = [asyncio.create_task(run.job("A", i)) for i in range(3)]
    await settle()
    tasks += [asyncio.create_task(run.job("B", i)) for i in range(3)]
    tasks += [asyncio.create_task(run.job("C", 0))]
    await settle()
    while len(run.started) < 7:
        for j in run.running():
            run.release[j].set()
        await settle()
    for j in run.running():
        run.release[j].set()
    await asyncio.gather(*tasks)
    # A came first and holds the slot; then the lines take turns: B, C, A, B, A, B.
    assert run.started == [("A", 0), ("B", 0), ("C", 0), ("A", 1), ("B", 1), ("A", 2),
                           ("B", 2)]


async def test_a_job_cancelled_while_waiting_leaves_its_line() -> None:
    run = Run(2)
    first = asyncio.create_task(run.job("A", 0))
    waiting = asyncio.create_task(run.job("A", 1))
    await settle()
    assert run.turns.waiting() == 1
    waiting.cancel()
    await settle()
    assert run.turns.waiting() == 0
    run.release[("A", 0)].set()
    await first
    assert run.turns.busy == 0 and run.turns.held == {}


@settings(max_examples=60, deadline=None)
@given(slots=st.integers(1, 4),
       arrivals=st.lists(st.tuples(st.sampled_from("ABCD"), st.integers(0, 3)),
                         min_size=1, max_size=24),
       finish=st.lists(st.integers(0, 7), min_size=1, max_size=60))
def test_the_rules_hold_whatever_comes_and_goes(slots: int, arrivals: list[tuple[str, int]],
                                                finish: list[int]) -> None:
    """Jobs arrive in bursts (each arrival: a share and how many steps later), running jobs
    finish in an order drawn by hypothesis; after every step the model's rules hold."""

    async def scenario() -> None:
        run = Run(slots)
        counts: dict[str, int] = {}
        tasks = []
        order: list[tuple[str, int]] = []  # the order jobs came in
        steps = max(a for _, a in arrivals) + 1
        picks = iter(finish * 10)
        for step in range(steps + len(arrivals) * 2):
            for share, at in arrivals:
                if at == step:
                    n = counts.get(share, 0)
                    counts[share] = n + 1
                    order.append((share, n))
                    tasks.append(asyncio.create_task(run.job(share, n)))
            await settle()
            running = run.running()
            shares = {s for s, _ in running}
            per_share = slots - 1 if slots >= 2 else 1
            assert len(running) <= slots
            assert all(sum(1 for s, _ in running if s == x) <= per_share for x in shares)
            # Nothing waits while a slot is free to it.
            waiting = [j for j in order if j not in run.started]
            for share, _ in waiting:
                held = sum(1 for s, _ in running if s == share)
                assert len(running) == slots or held == per_share
            if running:
                pick = running[next(picks, 0) % len(running)]
                run.release[pick].set()
        for j in order:
            run.release.setdefault(j, asyncio.Event()).set()
        await asyncio.gather(*tasks)
        # Each share's jobs started in the order they came.
        for share in counts:
            assert [n for s, n in run.started if s == share] == list(range(counts[share]))
        assert sorted(run.started) == sorted(order)
        assert run.most_at_once <= slots
        assert run.most_of_one_share <= (slots - 1 if slots >= 2 else 1)

    asyncio.run(scenario())


def test_room_shares_keep_the_first_address_and_forget_the_oldest() -> None:
    shares = RoomShares(keep=2)
    shares.opened_from("r1", "10.0.0.1")
    shares.opened_from("r1", "10.0.0.2")  # a second party of a paired room: the first stays
    shares.opened_from("r2", "")  # no address: nothing known
    assert (shares.of("r1"), shares.of("r2")) == ("10.0.0.1", "")
    shares.opened_from("r2", "10.0.0.3")
    shares.opened_from("r3", "10.0.0.4")
    assert (shares.of("r1"), shares.of("r2"), shares.of("r3")) == ("", "10.0.0.3", "10.0.0.4")
