"""Background work at the bot workers (server/bot_turns.py, the lower class of
:class:`FairTurns`), checked against the rules written here as a model: a background job
starts only when no decision of any share waits and two slots or more are free (it never
takes the last free one: none start with one slot, and with two only while nothing else
runs), a decision waits only where it must (every slot busy, or its share at its cap), and a
background job waits only when it must (a decision waits, or fewer than two slots are free)."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st
from tablas.server.bot_turns import FairTurns

Job = tuple[str, int, bool]  # share, its number in that share's class, background


class Probe(FairTurns):
    """A :class:`FairTurns` that notes, as it hands a slot to a background job, how many
    decisions wait then and how many slots are free (its job's task runs a little later, when
    more may have come)."""

    def __init__(self, slots: int) -> None:
        super().__init__(slots)
        self.at_background_start: list[tuple[int, int]] = []

    def _take(self, share: str, background: bool) -> None:
        if background:
            self.at_background_start.append((self.waiting(), self.slots - self.busy))
        super()._take(share, background)


class Run:
    """Jobs of both classes through a :class:`FairTurns`, each held until the test lets it
    finish; what started, in order."""

    def __init__(self, slots: int) -> None:
        self.turns = Probe(slots)
        self.started: list[Job] = []
        self.release: dict[Job, asyncio.Event] = {}
        self.most_background = 0

    async def job(self, job: Job) -> None:
        share, _, background = job
        done = self.release.setdefault(job, asyncio.Event())
        async with self.turns.turn(share, background=background):
            self.started.append(job)
            self.most_background = max(self.most_background, self.turns.background)
            await done.wait()

    def running(self) -> list[Job]:
        return [j for j in self.started if not self.release[j].is_set()]


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_background_waits_for_every_decision_and_keeps_a_slot_free() -> None:
    run = Run(2)
    low = [asyncio.create_task(run.job(("A", i, True))) for i in range(3)]
    await settle()
    assert run.running() == [("A", 0, True)]  # one slot of two, never both
    first = asyncio.create_task(run.job(("B", 0, False)))
    await settle()
    assert ("B", 0, False) in run.running()  # at once: the last slot was kept free
    second = asyncio.create_task(run.job(("C", 0, False)))
    await settle()
    assert run.turns.waiting() == 1  # every slot busy: it waits for the first to end
    run.release[("A", 0, True)].set()
    await settle()
    # The freed slot goes to the waiting decision, not to the next background job.
    assert run.running() == [("B", 0, False), ("C", 0, False)]
    run.release[("B", 0, False)].set()
    await settle()
    # One slot free of two: the background waits while a decision runs.
    assert run.running() == [("C", 0, False)]
    run.release[("C", 0, False)].set()
    await settle()
    assert run.running() == [("A", 1, True)]
    for j in list(run.release):
        run.release[j].set()
    await asyncio.gather(*low, first, second)
    assert run.turns.at_background_start == [(0, 2)] * 3
    assert run.turns.busy == run.turns.background == 0


async def test_one_slot_runs_no_background_job() -> None:
    run = Run(1)
    low = asyncio.create_task(run.job(("A", 0, True)))
    await settle()
    assert run.started == [] and run.turns.waiting_background() == 1
    low.cancel()
    await settle()
    assert run.turns.waiting_background() == 0 and run.turns.busy == 0


async def test_background_starts_when_two_slots_are_free() -> None:
    run = Run(3)
    decisions = [asyncio.create_task(run.job((s, 0, False))) for s in "AB"]
    await settle()
    low = asyncio.create_task(run.job(("C", 0, True)))
    await settle()
    assert run.turns.busy == 2 and run.turns.waiting_background() == 1  # one slot free
    run.release[("A", 0, False)].set()
    await settle()
    assert ("C", 0, True) in run.running()  # two free: it takes one, one stays free
    for j in list(run.release):
        run.release[j].set()
    await asyncio.gather(*decisions, low)


@settings(max_examples=80, deadline=None)
@given(slots=st.integers(1, 4),
       arrivals=st.lists(st.tuples(st.sampled_from("ABC"), st.integers(0, 3), st.booleans()),
                         min_size=1, max_size=24),
       finish=st.lists(st.integers(0, 7), min_size=1, max_size=60))
def test_the_background_rules_hold_whatever_comes_and_goes(
        slots: int, arrivals: list[tuple[str, int, bool]], finish: list[int]) -> None:
    """Decisions and background jobs arrive in bursts (a share, how many steps later, which
    class), running jobs finish in an order drawn by hypothesis; after every step the
    model's rules hold."""

    async def scenario() -> None:
        run = Run(slots)
        counts: dict[tuple[str, bool], int] = {}
        tasks = []
        order: list[Job] = []
        per_share = slots - 1 if slots >= 2 else 1
        steps = max(a for _, a, _ in arrivals) + 1
        picks = iter(finish * 10)
        for step in range(steps + len(arrivals) * 2):
            for share, at, background in arrivals:
                if at == step:
                    n = counts.get((share, background), 0)
                    counts[share, background] = n + 1
                    order.append((share, n, background))
                    tasks.append(asyncio.create_task(run.job((share, n, background))))
            await settle()
            running = run.running()
            low = [j for j in running if j[2]]
            assert len(running) <= slots and len(low) <= slots - 1
            waiting = [j for j in order if j not in run.started]
            decisions_wait = any(not b for _, _, b in waiting)
            for share, _, background in waiting:
                if background:
                    assert decisions_wait or slots - len(running) < 2
                else:
                    held = sum(1 for s, _, b in running if s == share and not b)
                    assert len(running) == slots or held == per_share
            if running:
                pick = running[next(picks, 0) % len(running)]
                run.release[pick].set()
        for j in order:
            run.release.setdefault(j, asyncio.Event()).set()
        if slots == 1:  # background jobs never start: cancel them
            for t, j in zip(tasks, order, strict=True):
                if j[2] and j not in run.started:
                    t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert all(w == 0 and free >= 2 for w, free in run.turns.at_background_start)
        assert run.most_background <= slots - 1
        for (share, background), count in counts.items():
            if slots > 1 or not background:
                assert [n for s, n, b in run.started if (s, b) == (share, background)] \
                    == list(range(count))
        assert run.turns.busy == 0 and run.turns.waiting() == run.turns.waiting_background() == 0

    asyncio.run(scenario())
