"""The two kinds of players a match seats (contract section 17): an engine, a process per
game spoken to over the engine protocol (:mod:`tablas.server.bot_adapter.engine`, the one
``tablas bot`` uses), and a house level, whose decisions the engine package's bots make in
this process (on a thread, so that the loop goes on serving the engines of other games).

A player that cannot go on (an illegal answer, its time run out, its process dead) raises
:class:`Forfeit`: the game is lost with that reason."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol

from tablas.engine.core import Game
from tablas.engine.search.bots import decide
from tablas.server.bot_adapter.engine import Engine, EngineFailed
from tablas.server.match.options import PlayerSpec

ILLEGAL = "illegal_move"
TIME = "time_forfeit"
DIED = "engine_died"


class Forfeit(Exception):
    """The player lost the game: ``reason`` one of ILLEGAL, TIME, DIED; the text says
    more."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


class Player(Protocol):
    async def begin(self, game: Game[Any, Any], seat: int, options: dict[str, Any]) -> None:
        ...

    async def choose(self, game: Game[Any, Any], state: Any, legal: Sequence[Any],
                     time_ms: int, within_s: float, budget_ms: float, seed: int) -> tuple[int, str]:
        """The index of its move in ``legal``, and the move's text."""
        ...

    async def end(self, word: str, reason: str) -> None:
        ...

    def abandon(self) -> None:
        """The game is cut short (the match stops): let go at once."""
        ...


def make(spec: PlayerSpec) -> Player:
    if spec.argv is not None:
        return EnginePlayer(spec.argv)
    assert spec.level is not None
    return LevelPlayer(spec.level)


def _failed(e: EngineFailed) -> Forfeit:
    return Forfeit(TIME if e.kind == "time" else DIED, f"the engine {e}")


class EnginePlayer:
    def __init__(self, argv: Sequence[str]) -> None:
        self.engine = Engine(argv)

    async def begin(self, game: Game[Any, Any], seat: int, options: dict[str, Any]) -> None:
        try:
            await self.engine.start(game.id, seat, options)
        except EngineFailed as e:
            raise _failed(e) from None

    async def choose(self, game: Game[Any, Any], state: Any, legal: Sequence[Any],
                     time_ms: int, within_s: float, budget_ms: float, seed: int) -> tuple[int, str]:
        texts = [game.move_text(state, m) for m in legal]
        try:
            answer = await self.engine.ask(game.position_text(state), game.state_to_json(state),
                                           texts, time_ms, within_s)
        except EngineFailed as e:
            raise _failed(e) from None
        try:
            return texts.index(answer), answer
        except ValueError:
            raise Forfeit(ILLEGAL, f"the engine answered {answer[:80]!r}, not one of the "
                          f"{len(texts)} legal moves") from None

    async def end(self, word: str, reason: str) -> None:
        await self.engine.stop(f"result {word} {reason}")

    def abandon(self) -> None:
        self.engine.kill_now()


class LevelPlayer:
    def __init__(self, level: str) -> None:
        self.level = level

    async def begin(self, game: Game[Any, Any], seat: int, options: dict[str, Any]) -> None:
        return None

    async def choose(self, game: Game[Any, Any], state: Any, legal: Sequence[Any],
                     time_ms: int, within_s: float, budget_ms: float, seed: int) -> tuple[int, str]:
        decision = await asyncio.to_thread(decide, game.id, state, self.level, budget_ms, seed)
        move = game.move_from_json(state, decision.move)
        return list(legal).index(move), game.move_text(state, move)

    async def end(self, word: str, reason: str) -> None:
        return None

    def abandon(self) -> None:
        return None
