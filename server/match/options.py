"""``tablas match``'s options (contract section 17), read and checked before anything starts:
each bad one is a :class:`~tablas.server.bot_adapter.options.BadOption` whose text names it
(the command line prints it as one line on stderr, exit code 2)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

from tablas.engine.games import GAME_IDS, get_game
from tablas.engine.search.decision import LEVELS
from tablas.server.bot_adapter.options import CLOCK_TEXT, BadOption, engine_argv

DEFAULT_MOVE_MS = 1000
MAX_GAMES = 1_000_000
MAX_CONCURRENCY = 64
_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,40}")


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    name: str
    argv: tuple[str, ...] | None = None  # an engine's command; None: a house level
    level: str | None = None


@dataclass(frozen=True, slots=True)
class Sprt:
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05


@dataclass(frozen=True, slots=True)
class MatchOptions:
    game: str
    players: tuple[PlayerSpec, ...]
    games: int = 2  # per pair of players, even
    plies: int = 0  # random opening plies (when no file)
    positions: tuple[str, ...] = ()  # the openings file's positions, one per pair in turn
    concurrency: int = 1
    move_ms: int | None = DEFAULT_MOVE_MS  # per move; None: the clock
    clock: tuple[int, int] | None = None  # base and increment, ms
    sprt: Sprt | None = None
    seed: int = 0
    out: Path | None = None
    json: bool = False


def read_options(game: str, engines: list[str], levels: list[str], games: int,
                 openings: str | None, concurrency: int, move_ms: int | None,
                 clock: str | None, sprt: list[float] | None, alpha: float, beta: float,
                 seed: int | None, out: str | None, as_json: bool) -> MatchOptions:
    if game not in GAME_IDS:
        raise BadOption(f"--game {game!r}: one of {', '.join(GAME_IDS)}")
    players = [_engine(text) for text in engines] + [_level(text) for text in levels]
    names = [p.name for p in players]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise BadOption(f"two players are named {twice[0]!r}: give each engine a name of "
                        "its own (--engine NAME=COMMAND)")
    if len(players) < 2:
        raise BadOption("a match needs two players or more: --engine NAME=COMMAND and "
                        "--level LEVEL, each repeatable")
    if not 2 <= games <= MAX_GAMES or games % 2:
        raise BadOption(f"--games {games}: an even number of games per pair of players "
                        "(each plays both seats from each opening), 2 or more")
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise BadOption(f"--concurrency must be 1-{MAX_CONCURRENCY}")
    if move_ms is not None and clock is not None:
        raise BadOption("give --move-ms or --clock, not both")
    if move_ms is not None and not 1 <= move_ms <= 3_600_000:
        raise BadOption("--move-ms must be 1-3600000 (milliseconds per move)")
    clock_ms = None if clock is None else _clock(clock)
    plies, positions = _openings(game, openings)
    test = None
    if sprt is not None:
        if len(players) != 2:
            raise BadOption("--sprt tests two players: name exactly two")
        elo0, elo1 = sprt
        if not elo0 < elo1:
            raise BadOption(f"--sprt {elo0:g} {elo1:g}: ELO0 must be below ELO1")
        for flag, value in (("--alpha", alpha), ("--beta", beta)):
            if not 0 < value < 0.5:
                raise BadOption(f"{flag} {value:g}: a probability between 0 and 0.5")
        test = Sprt(elo0, elo1, alpha, beta)
    return MatchOptions(
        game=game, players=tuple(players), games=games, plies=plies, positions=positions,
        concurrency=concurrency,
        move_ms=None if clock_ms is not None else (move_ms or DEFAULT_MOVE_MS),
        clock=clock_ms, sprt=test,
        seed=seed if seed is not None else random.randrange(1 << 31),
        out=None if out is None else Path(out), json=as_json)


def _engine(text: str) -> PlayerSpec:
    name, eq, command = text.partition("=")
    if not eq or not _NAME.fullmatch(name):
        raise BadOption(f"--engine {text!r}: give NAME=COMMAND, NAME of letters, digits and "
                        "_.+- (at most 40), e.g. --engine mine=\"python3 mine.py\"")
    return PlayerSpec(name=name, argv=engine_argv(command, f"--engine {name}="))


def _level(text: str) -> PlayerSpec:
    if text not in LEVELS:
        raise BadOption(f"--level {text!r}: one of {', '.join(LEVELS)}")
    return PlayerSpec(name=f"bot({text})", level=text)


def _clock(text: str) -> tuple[int, int]:
    m = CLOCK_TEXT.fullmatch(text)
    if m is None:
        raise BadOption(f"--clock {text!r}: give BASE_S+INC_S in seconds, e.g. 10+0.1")
    base, inc = round(float(m.group(1)) * 1000), round(float(m.group(2)) * 1000)
    if base < 1:
        raise BadOption(f"--clock {text!r}: the base must be above 0")
    return base, inc


def _openings(game: str, text: str | None) -> tuple[int, tuple[str, ...]]:
    """Random plies, or the positions of a file (each checked now)."""
    if text is None:  # a game with dice varies by itself; the others need variety
        return (0 if get_game(game).has_chance else 2), ()
    if text.isdigit():
        plies = int(text)
        if plies > 200:
            raise BadOption(f"--openings {text}: at most 200 random plies")
        return plies, ()
    path = Path(text)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise BadOption(f"--openings {text!r}: neither a number of plies nor a file to read "
                        f"({getattr(e, 'strerror', None) or e})") from None
    positions = tuple(line.rstrip("\r") for line in lines)  # "" is Connect-4's empty board
    g = get_game(game)
    for i, line in enumerate(positions, 1):
        try:
            state = g.parse_position(line)
        except Exception as e:
            raise BadOption(f"--openings {text}: line {i}: {e}") from None
        if g.outcome(state) is not None:
            raise BadOption(f"--openings {text}: line {i}: the game is over there")
    if not positions:
        raise BadOption(f"--openings {text}: the file holds no position")
    return 0, positions
