"""How much one client address may ask of the server: a token bucket per address
(:class:`AddressBudget`: the WebSocket's messages, and separately the ``/api/*`` requests)
and a count of what an address has running at once (:class:`AddressSlots`: the explain
trees being built). Both are keyed by the peer's address without its port; behind a proxy
every client has the proxy's address."""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable


class AddressBudget:
    """One token bucket per client address, shared by all of its connections: it holds
    ``burst`` tokens (default ``rate``, at least one) and refills at ``rate`` a second; a
    handshake, a frame or a request takes one. A bucket that has had time to fill up again
    is the same as none, so it is forgotten: the table holds the addresses seen in the last
    ``refill`` seconds, however many addresses a scan uses, and forgetting costs O(1) a call
    (oldest first)."""

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic,
                 burst: float | None = None) -> None:
        """``rate``: tokens a second, positive and finite; ``burst``: the bucket's size."""
        if not 0 < rate < float("inf"):
            raise ValueError(f"a message budget must be positive and finite, not {rate!r}")
        self.rate = rate
        self.burst = max(rate if burst is None else burst, 1.0)
        self.refill = self.burst / rate  # seconds for an empty bucket to fill up
        self.clock = clock
        # address -> (tokens, when counted), the least recently charged first
        self.buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, address: str) -> bool:
        """Charges ``address`` one token; False (and nothing charged) if it has none."""
        now = self.clock()
        buckets = self.buckets
        while buckets:
            oldest, (_, at) = next(iter(buckets.items()))
            if now - at < self.refill:
                break
            del buckets[oldest]
        tokens, at = buckets.pop(address, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.rate)
        ok = tokens >= 1.0
        buckets[address] = (tokens - 1.0 if ok else tokens, now)
        return ok

    def retry_after(self, address: str) -> int:
        """Whole seconds (at least 1, as ``Retry-After`` wants) until ``address`` has a token
        again."""
        tokens, at = self.buckets.get(address, (self.burst, self.clock()))
        missing = 1.0 - min(self.burst, tokens + (self.clock() - at) * self.rate)
        return max(1, math.ceil(missing / self.rate))


class AddressSlots:
    """What is running at once: at most ``per_address`` for one address and ``total`` for
    all of them. :meth:`enter` takes a slot or says which cap refused it; :meth:`leave`
    gives it back (an address with none running is forgotten)."""

    def __init__(self, per_address: int, total: int) -> None:
        if per_address < 1 or total < 1:
            raise ValueError("slots: per_address and total must be at least 1")
        self.per_address = per_address
        self.total = total
        self.running: dict[str, int] = {}
        self.count = 0

    def enter(self, address: str) -> str | None:
        """Takes a slot for ``address``: None if taken, else why not (``"address"``: its
        own cap; ``"total"``: everyone's)."""
        mine = self.running.get(address, 0)
        if mine >= self.per_address:
            return "address"
        if self.count >= self.total:
            return "total"
        self.running[address] = mine + 1
        self.count += 1
        return None

    def leave(self, address: str) -> None:
        left = self.running[address] - 1
        if left:
            self.running[address] = left
        else:
            del self.running[address]
        self.count -= 1
