"""Registered players' secrets and limits: password hashes, name keys, login throttling.

A password is kept only as an scrypt hash with a random salt, its parameters written with it
(``scrypt$N$R$P$SALT$HASH``, hex), so that stronger parameters can come later without
breaking older hashes. Hashing costs tens of milliseconds of CPU on purpose: the callers run
it off the event loop (:func:`hash_password` and :func:`verify_password` are coroutines that
hand the work to a thread).

Two names are one when their keys are equal: casefold after NFKC ("Ana", "ANA", a fullwidth
"Ａna", "ﬁ" and "fi" alike). Registered players' keys are unique.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import unicodedata
from collections import deque
from collections.abc import Callable

SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
SALT_BYTES = 16
HASH_BYTES = 32
MIN_PASSWORD = 8
MAX_PASSWORD = 128

# Login failures counted within WINDOW seconds: past the limit for a name, or for an address,
# every login attempt for it is refused (rate_limited), the right password too, until the
# oldest failure leaves the window. Registrations are counted per address the same way.
WINDOW = 300.0
FAILURES_PER_NAME = 5
FAILURES_PER_ADDRESS = 20
REGISTRATIONS_PER_ADDRESS = 10


def name_key(name: str) -> str:
    """The key two names are compared by: NFKC, casefold, NFKC again (casefolding can undo
    the normal form: Unicode's NFKC_Casefold)."""
    return unicodedata.normalize(
        "NFKC", unicodedata.normalize("NFKC", name).casefold())


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int, length: int) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=length,
                          maxmem=256 * r * n + 1024 * 1024)


async def hash_password(password: str) -> str:
    """The text to store for ``password`` (computed in a thread)."""
    salt = secrets.token_bytes(SALT_BYTES)
    digest = await asyncio.to_thread(_scrypt, password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P,
                                     HASH_BYTES)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${digest.hex()}"


# Hashed against when the name is unknown, so that a wrong name costs what a wrong password
# does (the answer's time does not tell which names are registered).
_DUMMY = f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${'00' * SALT_BYTES}${'00' * HASH_BYTES}"


async def verify_password(password: str, stored: str | None) -> bool:
    """Whether ``password`` is the one ``stored`` was made from (computed in a thread, with
    a constant-time comparison); ``stored`` None (no such player) costs the same and is
    False."""
    text = _DUMMY if stored is None else stored
    try:
        kind, n, r, p, salt, digest = text.split("$")
        if kind != "scrypt":
            return False
        expected = bytes.fromhex(digest)
        got = await asyncio.to_thread(_scrypt, password, bytes.fromhex(salt), int(n), int(r),
                                      int(p), len(expected))
    except ValueError:
        return False
    return hmac.compare_digest(got, expected) and stored is not None


class Attempts:
    """Events per key within the last ``window`` seconds of ``clock``."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float]) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._seen: dict[str, deque[float]] = {}

    def _recent(self, key: str) -> deque[float] | None:
        times = self._seen.get(key)
        if times is None:
            return None
        cutoff = self.clock() - self.window
        while times and times[0] <= cutoff:
            times.popleft()
        if not times:
            del self._seen[key]
            return None
        return times

    def exhausted(self, key: str) -> bool:
        times = self._recent(key)
        return times is not None and len(times) >= self.limit

    def add(self, key: str) -> None:
        self._recent(key)
        self._seen.setdefault(key, deque()).append(self.clock())
        if len(self._seen) > 100_000:  # a scan of names: forget the oldest keys
            for old in list(self._seen)[:50_000]:
                del self._seen[old]


class LoginLimits:
    """The throttles of ``hello`` with a password and of ``register``."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.by_name = Attempts(FAILURES_PER_NAME, WINDOW, clock)
        self.by_address = Attempts(FAILURES_PER_ADDRESS, WINDOW, clock)
        self.registrations = Attempts(REGISTRATIONS_PER_ADDRESS, WINDOW, clock)

    def login_refused(self, key: str, address: str) -> str | None:
        """Why a login for ``key`` from ``address`` is refused now (None: it is not)."""
        if self.by_name.exhausted(key):
            return (f"too many failed logins for this name: at most {FAILURES_PER_NAME}"
                    f" in {WINDOW:g} s; try again later")
        if self.by_address.exhausted(address):
            return (f"too many failed logins from your address: at most"
                    f" {FAILURES_PER_ADDRESS} in {WINDOW:g} s; try again later")
        return None

    def failed(self, key: str, address: str) -> None:
        self.by_name.add(key)
        self.by_address.add(address)

    def register_refused(self, address: str) -> str | None:
        if self.registrations.exhausted(address):
            return (f"too many registrations from your address: at most"
                    f" {REGISTRATIONS_PER_ADDRESS} in {WINDOW:g} s; try again later")
        self.registrations.add(address)
        return None
