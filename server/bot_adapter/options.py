"""``tablas bot``'s options (contract section 12), read and checked before anything starts:
each bad one is a :class:`BadOption` whose text names it (the command line prints it as one
line on stderr, exit code 2)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from tablas.engine.games import GAME_IDS
from tablas.server.protocol import MAX_CLOCK_MS, MIN_CLOCK_MS, clean_name

Accept = Literal["any", "registered", "none"]
ACCEPTS: tuple[Accept, ...] = ("any", "registered", "none")
MAX_SEEKS = 3  # a player's open seeks at most (contract section 11)
MAX_GAMES = 8  # a bot account's games at once (contract section 12)
DEFAULT_CLOCK = "60+1"
CLOCK_TEXT = re.compile(r"(\d{1,6}(?:\.\d{1,3})?)\+(\d{1,6}(?:\.\d{1,3})?)")


class BadOption(ValueError):
    """An option ``tablas bot`` cannot run with; its text says which and why."""


@dataclass(frozen=True, slots=True)
class BotOptions:
    server: str  # ws://HOST:PORT/ws
    name: str
    password: str
    engine: tuple[str, ...]  # the engine's command, split as a shell would (no shell runs it)
    games: tuple[str, ...]
    accept: Accept = "any"
    seek: int = 0  # seeks kept open per game
    clock: tuple[int, int] = (60_000, 1_000)  # base and increment, ms (seeks, challenges)
    max_games: int = MAX_GAMES
    challenge: str | None = None  # a player or house level to keep a game going with
    tournaments: tuple[str, ...] = ()  # tournaments it enters while they wait (section 17)

    @property
    def clock_json(self) -> dict[str, int]:
        return {"base_ms": self.clock[0], "increment_ms": self.clock[1]}


def read_options(server: str, name: str, password: str, engine: str, games: str | None,
                 accept: str, seek: int, clock: str, max_games: int,
                 challenge: str | None, tournaments: list[str] | None = None) -> BotOptions:
    """The options as given on the command line, checked."""
    return BotOptions(server=_server(server), name=_name(name, "--name"),
                      password=_password(password), engine=engine_argv(engine),
                      games=_games(games), accept=_accept(accept),
                      seek=_seek(seek, _games(games)), clock=_clock(clock),
                      max_games=_max_games(max_games),
                      challenge=None if challenge is None else _name(challenge, "--challenge"),
                      tournaments=_tournaments(tournaments or []))


def _tournaments(ids: list[str]) -> tuple[str, ...]:
    for tid in ids:
        if not 1 <= len(tid) <= 64 or not tid.isprintable() or tid.strip() != tid:
            raise BadOption(f"--tournament {tid!r}: a tournament's id, as its page shows it "
                            "(/tournaments/ID)")
    return tuple(dict.fromkeys(ids))


def _server(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise BadOption(f"--server {text!r}: give the server's WebSocket address, "
                        "ws://HOST:PORT/ws")
    try:
        parts.port  # noqa: B018  (a port out of range raises here)
    except ValueError:
        raise BadOption(f"--server {text!r}: the port must be 0-65535") from None
    return text


def _name(text: str, option: str) -> str:
    try:
        return clean_name(text)
    except ValueError as e:
        raise BadOption(f"{option} {text!r}: {e}") from None


def _password(text: str) -> str:
    if not 8 <= len(text) <= 128:
        raise BadOption("--password must be 8-128 characters")
    return text


def engine_argv(text: str, option: str = "--engine") -> tuple[str, ...]:
    """An engine's command, split as a shell would (no shell runs it), its program found
    (``tablas match`` checks its engines with this too)."""
    try:
        argv = shlex.split(text)
    except ValueError as e:
        raise BadOption(f"{option} {text!r}: {e}") from None
    if not argv:
        raise BadOption(f"{option} is empty: give the command that runs your engine, e.g. "
                        "\"python3 my_engine.py\"")
    program = argv[0]
    found = (os.path.isfile(program) and os.access(program, os.X_OK)) if os.sep in program \
        else shutil.which(program) is not None
    if not found:
        raise BadOption(f"{option}: no program {program!r} to run (give its path, or a "
                        "command on the PATH, and make it executable)")
    return tuple(argv)


def _games(text: str | None) -> tuple[str, ...]:
    if text is None:
        return GAME_IDS
    games = tuple(g.strip() for g in text.split(","))
    unknown = [g for g in games if g not in GAME_IDS]
    if unknown or not games:
        raise BadOption(f"--games {text!r}: unknown game {unknown[0] if unknown else ''!r}; "
                        f"the games are {','.join(GAME_IDS)}")
    if len(set(games)) != len(games):
        raise BadOption(f"--games {text!r} names a game twice")
    return games


def _accept(text: str) -> Accept:
    for a in ACCEPTS:
        if a == text:
            return a
    raise BadOption(f"--accept {text!r}: one of {', '.join(ACCEPTS)}")


def _seek(n: int, games: tuple[str, ...]) -> int:
    if n < 0:
        raise BadOption("--seek must be 0 or more")
    if n * len(games) > MAX_SEEKS:
        raise BadOption(f"--seek {n} keeps {n} seek(s) open for each of {len(games)} game(s):"
                        f" {n * len(games)}, but a player holds at most {MAX_SEEKS}; name fewer"
                        " games with --games")
    return n


def _clock(text: str) -> tuple[int, int]:
    m = CLOCK_TEXT.fullmatch(text)
    if m is None:
        raise BadOption(f"--clock {text!r}: give BASE_S+INC_S in seconds, e.g. 60+1")
    base, inc = round(float(m.group(1)) * 1000), round(float(m.group(2)) * 1000)
    if not MIN_CLOCK_MS <= base <= MAX_CLOCK_MS or inc > MAX_CLOCK_MS:
        raise BadOption(f"--clock {text!r}: the base must be {MIN_CLOCK_MS // 1000} seconds "
                        f"to {MAX_CLOCK_MS // 3_600_000} hours")
    return base, inc


def _max_games(n: int) -> int:
    if not 1 <= n <= MAX_GAMES:
        raise BadOption(f"--max-games must be 1-{MAX_GAMES} (a bot account holds at most "
                        f"{MAX_GAMES} games at once)")
    return n
