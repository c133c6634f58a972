"""A one-sided bear-off database, computed by the engine and cached on disk.

For every home-board position of up to 15 checkers on points 1..6 (``C(21, 6) = 54,264``
positions, the empty board included) the database holds

* ``E(pos)``, the expected number of rolls to bear every checker off, playing alone (no
  opponent) and each roll the play that minimises ``E``:
  ``E(pos) = 1 + sum over the 21 rolls of p(roll) * min over legal plays of E(after)``;
* the distribution of the number of rolls that this same play-to-minimise-``E`` policy needs:
  ``P(exactly n rolls)`` for ``n = 0, 1, 2, ...`` (tails below ``1e-15`` are trimmed).

From the two distributions of a race in the bear-off, the chance that the side on roll wins is
``sum over n of P(me needs exactly n) * P(opponent needs n or more)``. This is the classic
one-sided approximation (as gnubg's one-sided databases): each side plays to minimise its own
expected rolls, which is the best play in all but a few close positions near the end, where
playing to maximise the chance of finishing within a given number of rolls can differ slightly.
Gammons are not covered (a position where the loser has not yet borne off is scored as a
single game).

Positions are ``home`` sequences of 6 counts, for points 1..6 from the owner's side (the slice
``board[1:7]`` of a 26-count board). Their index is a perfect hash, the combinatorial number
system: with ``T_m`` the checkers on points ``m..6`` and separators ``s_k = T_(6-k) + k``
(``k = 0..5``, strictly increasing in ``0..20``), ``index = sum_k C(s_k, k + 1)``. Every
checker move strictly lowers the index, so a single pass in index order computes the database;
and the positions with at most ``m`` checkers are exactly the first ``C(m + 6, 6)`` indices, so
a smaller database (``max_checkers``, for tests) is a prefix of the full one.

Rules inside the home board with no opponent are simple: every die can always be played while
a checker is left (a checker on a point above the die moves down, one on the die's point bears
off, and with nothing on or above the die's point the highest checker bears off), so a play is
just a sequence of single-die steps using every die (either order for a non-double, four times
for a double), stopping when the last checker is off. The builder uses that: for a double ``d``
it keeps ``G_k(pos)``, the best ``E`` reachable in ``k`` more steps of ``d``, so a roll costs a
minimum over at most 6 successors instead of enumerating up to 126 four-step plays. The tests
check this generator against :func:`tablas.engine.games.backgammon.generate_plays`.

Cache: the full database is computed lazily on first use and written to
``$TABLAS_CACHE/bearoff-v1.bin`` (``$TABLAS_CACHE`` is a directory; default
``$XDG_CACHE_HOME/tablas`` or ``~/.cache/tablas``) by an atomic write (temporary file +
``os.replace``). The file has a header (magic, format version, byte order, checker count, array
sizes) and a SHA-256 of the payload; a missing, corrupt, truncated or stale file is recomputed.
An unwritable cache directory only costs recomputing it in each process.
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
import tempfile
import threading
from array import array
from collections.abc import Sequence
from math import comb
from pathlib import Path

from tablas.engine.games.backgammon import DICE_OUTCOMES

MAX_CHECKERS = 15
POINTS = 6
FORMAT_VERSION = 1
CACHE_NAME = "bearoff-v1.bin"
TRIM = 1e-15  # distribution entries below this at either end are dropped

_MAGIC = b"TABLASBO"
_HEADER = struct.Struct("<8sII1sxxxIII32s")  # magic, version, hdr size, byte order, m, n, flat
_BINOM: tuple[tuple[int, ...], ...] = tuple(
    tuple(comb(n, k) for k in range(POINTS + 2)) for n in range(MAX_CHECKERS + POINTS + 1)
)

Home = tuple[int, ...]


def positions_count(max_checkers: int = MAX_CHECKERS) -> int:
    """How many home-board positions have at most ``max_checkers`` checkers."""
    return comb(max_checkers + POINTS, POINTS)


def index_of(home: Sequence[int]) -> int:
    """The perfect-hash index of a home board (counts on points 1..6)."""
    r = 0
    t = 0
    b = _BINOM
    for k in range(POINTS):
        t += home[POINTS - 1 - k]
        r += b[t + k][k + 1]
    return r


def position_at(index: int, max_checkers: int = MAX_CHECKERS) -> Home:
    """The inverse of :func:`index_of` (counts on points 1..6)."""
    if not 0 <= index < positions_count(max_checkers):
        raise ValueError(f"bear-off index {index} out of range")
    seps = [0] * POINTS
    r = index
    hi = max_checkers + POINTS
    for k in range(POINTS - 1, -1, -1):
        s = hi
        while _BINOM[s][k + 1] > r:
            s -= 1
        seps[k] = s
        r -= _BINOM[s][k + 1]
        hi = s - 1
    # s_k = T_(6-k) + k, T_m = checkers on points m..6.
    tops = [seps[k] - k for k in range(POINTS)]  # tops[k] = T_(6-k)
    counts = [0] * POINTS
    prev = 0
    for k in range(POINTS):
        counts[POINTS - 1 - k] = tops[k] - prev
        prev = tops[k]
    return tuple(counts)


def _check_home(home: Sequence[int], max_checkers: int) -> Home:
    h = tuple(home)
    if len(h) != POINTS or any(not isinstance(c, int) or c < 0 for c in h):
        raise ValueError(f"a bear-off position is 6 counts >= 0 for points 1..6, got {home!r}")
    if sum(h) > max_checkers:
        raise ValueError(
            f"bear-off position {h!r} has {sum(h)} checkers; the database has at most "
            f"{max_checkers}"
        )
    return h


def single_steps(home: Sequence[int], die: int) -> list[Home]:
    """Every distinct position after moving one checker by ``die`` (alone, no opponent)."""
    out: list[Home] = []
    highest = 0
    for p in range(POINTS, 0, -1):
        if home[p - 1]:
            highest = p
            break
    if not highest:
        return out
    for p in range(highest, 0, -1):
        if p < die:
            if p == highest:  # nothing on or above the die's point: the highest bears off
                h = list(home)
                h[p - 1] -= 1
                out.append(tuple(h))
            break
        if home[p - 1]:
            h = list(home)
            h[p - 1] -= 1
            if p > die:
                h[p - 1 - die] += 1
            out.append(tuple(h))
    return out


def final_positions(home: Sequence[int], d1: int, d2: int) -> set[Home]:
    """Every position a legal play of ``d1``-``d2`` can leave (alone, no opponent)."""
    seqs = [(d1,) * 4] if d1 == d2 else [(d1, d2), (d2, d1)]
    out: set[Home] = set()
    for seq in seqs:
        layer = {tuple(home)}
        for d in seq:
            nxt: set[Home] = set()
            for h in layer:
                if not any(h):
                    nxt.add(h)
                else:
                    nxt.update(single_steps(h, d))
            layer = nxt
        out |= layer
    return out


class BearoffDB:
    """The arrays of a one-sided bear-off database for up to ``max_checkers`` checkers."""

    __slots__ = ("dist", "expected", "lows", "max_checkers", "offsets")

    def __init__(
        self,
        max_checkers: int,
        expected: array[float],
        lows: array[int],
        offsets: array[int],
        dist: array[float],
    ) -> None:
        n = positions_count(max_checkers)
        if len(expected) != n or len(lows) != n or len(offsets) != n + 1:
            raise ValueError("bear-off database arrays have the wrong sizes")
        if offsets[n] != len(dist):
            raise ValueError("bear-off database offsets do not match its distributions")
        self.max_checkers = max_checkers
        self.expected = expected
        self.lows = lows
        self.offsets = offsets
        self.dist = dist

    def __len__(self) -> int:
        return len(self.expected)

    def expected_rolls(self, home: Sequence[int]) -> float:
        """Expected rolls to bear off every checker of ``home`` (0 for an empty board)."""
        return self.expected[index_of(_check_home(home, self.max_checkers))]

    def off_distribution(self, home: Sequence[int]) -> list[float]:
        """``P(exactly n rolls)`` for ``n = 0, 1, ...`` up to the last non-negligible one."""
        i = index_of(_check_home(home, self.max_checkers))
        lo = self.lows[i]
        return [0.0] * lo + list(self.dist[self.offsets[i] : self.offsets[i + 1]])

    def win_probability(self, me_home: Sequence[int], opp_home: Sequence[int]) -> float:
        """The chance that ``me``, on roll, bears off first (cubeless, gammons ignored)."""
        mine = self.off_distribution(me_home)
        theirs = self.off_distribution(opp_home)
        p = 0.0
        before = 0.0  # P(the opponent needs fewer than n rolls)
        for n, pm in enumerate(mine):
            if 0 < n <= len(theirs):
                before += theirs[n - 1]
            p += pm * (1.0 - before)
        return min(1.0, max(0.0, p))


# --- building -------------------------------------------------------------------------------


def build(max_checkers: int = MAX_CHECKERS) -> BearoffDB:
    """Compute the database for every position of up to ``max_checkers`` checkers."""
    if not 0 <= max_checkers <= MAX_CHECKERS:
        raise ValueError(f"max_checkers must be 0..{MAX_CHECKERS}")
    n = positions_count(max_checkers)
    positions = _enumerate(max_checkers)
    index = {h: i for i, h in enumerate(positions)}
    dice = range(1, 7)
    nondoubles = [(a, b, p) for (a, b), p in DICE_OUTCOMES if a != b]
    doubles = [(a, p) for (a, b), p in DICE_OUTCOMES if a == b]

    inf = float("inf")
    e = [0.0] * n
    # g[k][d][i]: the best E reachable from i with k more steps of die d; f: the final index.
    g = [[[0.0] * n for _ in range(7)] for _ in range(4)]
    f = [[[0] * n for _ in range(7)] for _ in range(4)]
    g[0] = [e] * 7
    f[0] = [list(range(n))] * 7
    lows = array("B", [0]) * n
    dists: list[list[float]] = [[] for _ in range(n)]
    dists[0] = [1.0]

    for i in range(1, n):
        h = positions[i]
        succ = [[index[s] for s in single_steps(h, d)] if d else [] for d in range(7)]
        for k in (1, 2, 3):
            gk, gp, fk, fp = g[k], g[k - 1], f[k], f[k - 1]
            for d in dice:
                best = inf
                arg = 0
                gpd = gp[d]
                for s in succ[d]:
                    v = gpd[s]
                    if v < best:
                        best = v
                        arg = s
                gk[d][i] = best
                fk[d][i] = fp[d][arg]
        total = 1.0
        finals: dict[int, float] = {}
        for a, b, p in nondoubles:
            best = inf
            arg = 0
            g1b, g1a = g[1][b], g[1][a]
            for s in succ[a]:
                v = g1b[s]
                if v < best:
                    best = v
                    arg = f[1][b][s]
            for s in succ[b]:
                v = g1a[s]
                if v < best:
                    best = v
                    arg = f[1][a][s]
            total += p * best
            finals[arg] = finals.get(arg, 0.0) + p
        for d, p in doubles:
            best = inf
            arg = 0
            g3 = g[3][d]
            for s in succ[d]:
                v = g3[s]
                if v < best:
                    best = v
                    arg = f[3][d][s]
            total += p * best
            finals[arg] = finals.get(arg, 0.0) + p
        e[i] = total
        # The distribution: one more roll than each chosen final position's.
        lo = min(lows[j] for j in finals) + 1
        hi = max(lows[j] + len(dists[j]) for j in finals) + 1
        acc = [0.0] * (hi - lo)
        for j, w in finals.items():
            base = lows[j] + 1 - lo
            for t, x in enumerate(dists[j]):
                acc[base + t] += w * x
        a0, a1 = 0, len(acc)
        while a1 > a0 + 1 and acc[a1 - 1] < TRIM:
            a1 -= 1
        while a0 < a1 - 1 and acc[a0] < TRIM:
            a0 += 1
        lows[i] = lo + a0
        dists[i] = acc[a0:a1]

    offsets = array("I", [0]) * (n + 1)
    flat = array("d")
    for i in range(n):
        flat.extend(dists[i])
        offsets[i + 1] = len(flat)
    return BearoffDB(max_checkers, array("d", e), lows, offsets, flat)


def _enumerate(max_checkers: int) -> list[Home]:
    """Every position of at most ``max_checkers`` checkers, in index order."""
    out: list[Home | None] = [None] * positions_count(max_checkers)

    def rec(prefix: list[int], left: int) -> None:
        if len(prefix) == POINTS:
            h = tuple(prefix)
            out[index_of(h)] = h
            return
        for c in range(left + 1):
            prefix.append(c)
            rec(prefix, left - c)
            prefix.pop()

    rec([], max_checkers)
    assert all(h is not None for h in out)
    return [h for h in out if h is not None]


# --- the cache file -------------------------------------------------------------------------


def cache_dir() -> Path:
    """``$TABLAS_CACHE``, else ``$XDG_CACHE_HOME/tablas``, else ``~/.cache/tablas``."""
    env = os.environ.get("TABLAS_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "tablas"


def cache_path(max_checkers: int = MAX_CHECKERS) -> Path:
    """The cache file of the database for ``max_checkers`` (the full one: ``bearoff-v1.bin``)."""
    if max_checkers == MAX_CHECKERS:
        return cache_dir() / CACHE_NAME
    return cache_dir() / f"bearoff-v{FORMAT_VERSION}-c{max_checkers}.bin"


def _byteorder() -> bytes:
    return b"<" if sys.byteorder == "little" else b">"


def to_bytes(db: BearoffDB) -> bytes:
    """The cache file's contents: header, then E, lows, offsets and the distributions."""
    payload = b"".join(
        (db.expected.tobytes(), db.lows.tobytes(), db.offsets.tobytes(), db.dist.tobytes())
    )
    header = _HEADER.pack(
        _MAGIC,
        FORMAT_VERSION,
        _HEADER.size,
        _byteorder(),
        db.max_checkers,
        len(db.expected),
        len(db.dist),
        hashlib.sha256(payload).digest(),
    )
    return header + payload


def from_bytes(data: bytes, max_checkers: int = MAX_CHECKERS) -> BearoffDB | None:
    """The database in ``data``; ``None`` if it is corrupt, stale or for other parameters."""
    if len(data) < _HEADER.size:
        return None
    magic, version, hsize, order, m, n, nflat, digest = _HEADER.unpack_from(data)
    if (
        magic != _MAGIC
        or version != FORMAT_VERSION
        or hsize != _HEADER.size
        or order != _byteorder()
        or m != max_checkers
        or n != positions_count(max_checkers)
    ):
        return None
    sizes = (
        n * array("d").itemsize,
        n * array("B").itemsize,
        (n + 1) * array("I").itemsize,
        nflat * array("d").itemsize,
    )
    payload = data[_HEADER.size :]
    if len(payload) != sum(sizes) or hashlib.sha256(payload).digest() != digest:
        return None
    cuts = [_HEADER.size]
    for size in sizes:
        cuts.append(cuts[-1] + size)
    expected = array("d")
    expected.frombytes(data[cuts[0] : cuts[1]])
    lows = array("B")
    lows.frombytes(data[cuts[1] : cuts[2]])
    offsets = array("I")
    offsets.frombytes(data[cuts[2] : cuts[3]])
    dist = array("d")
    dist.frombytes(data[cuts[3] : cuts[4]])
    try:
        return BearoffDB(m, expected, lows, offsets, dist)
    except ValueError:
        return None


def save(db: BearoffDB, path: Path) -> None:
    """Write ``db`` to ``path`` atomically (a temporary file in the same folder, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(to_bytes(db))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load(path: Path, max_checkers: int = MAX_CHECKERS) -> BearoffDB | None:
    """The database cached at ``path``; ``None`` if missing, unreadable, corrupt or stale."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return from_bytes(data, max_checkers)


def load_or_build(max_checkers: int = MAX_CHECKERS, path: Path | None = None) -> BearoffDB:
    """The cached database if valid, else computed now and cached (best effort)."""
    p = cache_path(max_checkers) if path is None else path
    db = load(p, max_checkers)
    if db is not None:
        return db
    db = build(max_checkers)
    try:
        save(db, p)
    except OSError:
        pass  # read-only or full disk: keep the computed copy for this process
    return db


_LOCK = threading.Lock()
_DB: BearoffDB | None = None


def database() -> BearoffDB:
    """The full database, loaded or computed on first use, then kept for the process."""
    global _DB
    db = _DB
    if db is None:
        with _LOCK:
            if _DB is None:
                _DB = load_or_build()
            db = _DB
    return db


# --- the API on the full database ------------------------------------------------------------


def expected_rolls(home: Sequence[int]) -> float:
    """Expected rolls to bear off the home board ``home`` (counts on points 1..6)."""
    return database().expected_rolls(home)


def off_distribution(home: Sequence[int]) -> Sequence[float]:
    """``P(exactly n rolls to bear off)`` for ``n = 0, 1, ...``; it sums to 1."""
    return database().off_distribution(home)


def win_probability(me_home: Sequence[int], opp_home: Sequence[int]) -> float:
    """The chance that the side on roll (``me_home``) bears off first."""
    return database().win_probability(me_home, opp_home)


def is_bearoff(me: Sequence[int], opp: Sequence[int]) -> bool:
    """Whether both 26-count boards have every checker on points 1..6 or off (no contact)."""
    return all(not me[p] and not opp[p] for p in range(7, 26))


def home(board: Sequence[int]) -> Home:
    """The counts on points 1..6 of a 26-count board."""
    return tuple(board[1:7])
