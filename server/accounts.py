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

# Login failures counted within WINDOW seconds (docs/security.md "Login limits"). Nobody can
# lock a player out by guessing wrong: a hard refusal is only ever per address.
# - per (name, address): past FAILURES_PER_NAME, that address may not try that name again
#   (rate_limited), the right password too, until the oldest failure leaves the window;
# - per address: past FAILURES_PER_ADDRESS failures on any names, that address may not log in;
# - per name, from every address together: past SLOW_AFTER, every login for the name waits
#   first (the right password too, so the wait tells nothing), SLOW_BASE seconds doubled for
#   each further SLOW_STEP failures, at most SLOW_MAX: many addresses are slowed, the owner
#   is only delayed, never refused;
# - a device that holds a token (hello with its token) is never counted nor refused.
# Registrations are counted per address as failures are.
WINDOW = 300.0
FAILURES_PER_NAME = 5
FAILURES_PER_ADDRESS = 20
SLOW_AFTER = 10
SLOW_STEP = 10
SLOW_BASE = 0.5
SLOW_MAX = 4.0
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

    def count(self, key: str) -> int:
        times = self._recent(key)
        return 0 if times is None else len(times)

    def exhausted(self, key: str) -> bool:
        return self.count(key) >= self.limit

    def add(self, key: str) -> None:
        self._recent(key)
        self._seen.setdefault(key, deque()).append(self.clock())
        if len(self._seen) > 100_000:  # a scan of names: forget the oldest keys
            for old in list(self._seen)[:50_000]:
                del self._seen[old]


class LoginLimits:
    """The throttles of ``hello`` with a password and of ``register`` (the comment on WINDOW)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.by_name_and_address = Attempts(FAILURES_PER_NAME, WINDOW, clock)
        self.by_address = Attempts(FAILURES_PER_ADDRESS, WINDOW, clock)
        self.by_name = Attempts(SLOW_AFTER, WINDOW, clock)
        self.registrations = Attempts(REGISTRATIONS_PER_ADDRESS, WINDOW, clock)

    def login_refused(self, key: str, address: str) -> str | None:
        """Why a login for ``key`` from ``address`` is refused now (None: it is not)."""
        if self.by_name_and_address.exhausted(_pair(key, address)):
            return (f"Too many wrong passwords for this name from your address (at most"
                    f" {FAILURES_PER_NAME} in {WINDOW / 60:g} minutes). Please wait a few"
                    " minutes and try again.")
        if self.by_address.exhausted(address):
            return (f"Too many failed logins from your address (at most"
                    f" {FAILURES_PER_ADDRESS} in {WINDOW / 60:g} minutes). Please wait a few"
                    " minutes and try again.")
        return None

    def delay(self, key: str) -> float:
        """Seconds a login for ``key`` waits before its password is checked: 0 until the name
        has had SLOW_AFTER failures in the window from all addresses together."""
        excess = self.by_name.count(key) - SLOW_AFTER
        if excess < 0:
            return 0.0
        return float(min(SLOW_MAX, SLOW_BASE * 2 ** (excess // SLOW_STEP)))

    def failed(self, key: str, address: str) -> None:
        self.by_name_and_address.add(_pair(key, address))
        self.by_address.add(address)
        self.by_name.add(key)

    def register_refused(self, address: str) -> str | None:
        if self.registrations.exhausted(address):
            return (f"Too many registrations from your address (at most"
                    f" {REGISTRATIONS_PER_ADDRESS} in {WINDOW / 60:g} minutes). Please wait a"
                    " few minutes and try again.")
        self.registrations.add(address)
        return None


def _pair(key: str, address: str) -> str:
    # A name key holds no NUL (names refuse control characters): the pair is unambiguous.
    return f"{address}\0{key}"
