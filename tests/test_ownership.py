"""The ownership port (server/ownership.py): every write of a live room's owner carries the
fence the port gives, the very first one (the room's creation, ``opening``'s) included. The
store checks a fence in the same transaction on both backends (migration 0009), so a port
whose fence the database does not hold makes every write fail with nothing written; the
single server's port (``Solo``) carries none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tablas.server.bot_pool import BotPool
from tablas.server.connections import Conn, Player, Presence
from tablas.server.errors import LeaseLost
from tablas.server.hub import Hub
from tablas.server.live_room import RoomServices
from tablas.server.lobby import RecentGames
from tablas.server.ownership import Fence, Lost, Solo
from tablas.server.protocol import RoomOptions
from tablas.server.room import SeatState
from tablas.server.store import open_store


class ForeignFence:
    """A port that grants every claim but whose fences name a lease the database does not
    hold: what a node's writes carry once another node has taken its things."""

    settles_backlog = True

    def __init__(self) -> None:
        self.fenced: list[str] = []
        self.refused: list[str] = []

    async def claim(self, key: str, new: bool) -> str | None:
        return None

    def fence(self, key: str) -> Fence | None:
        self.fenced.append(key)
        return Fence(key, "another-node", 7, lambda f: self.refused.append(f.key))

    def opening(self, key: str) -> Fence | None:
        return self.fence(key)

    def opened(self, key: str) -> None:
        raise AssertionError("a write that failed was taken as committed")

    def lost(self, callback: Lost) -> None:
        pass


class Ws:
    """A connection's socket that takes what it is sent and drops it."""

    transport: Any = None


async def open_one(db: Path, ownership: Any) -> tuple[Hub, list[str]]:
    store = await open_store(str(db))
    await store.create_player("p1", "Ana", "token")
    services = RoomServices(store, BotPool(1), Presence(), lambda: 1_000.0,
                            ownership=ownership, games=RecentGames(lambda: 1_000.0))
    hub = Hub(services)
    conn = Conn(ws=Ws(), player=Player("p1", "Ana"))  # type: ignore[arg-type]
    conn.send = lambda _msg: None  # type: ignore[method-assign]
    made: list[str] = []
    try:
        made.append(await hub.open_room(conn, "tictactoe", {}, [SeatState("human"),
                                        SeatState("human")], 0, None, RoomOptions()))
    except BaseException:
        await store.close()  # an open store's thread would keep the test process alive
        raise
    finally:
        services.bots.shutdown()
    return hub, made


async def test_a_new_rooms_first_write_carries_the_ports_fence(tmp_path: Path) -> None:
    port = ForeignFence()
    with pytest.raises(LeaseLost):
        await open_one(tmp_path / "t.db", port)
    assert port.fenced and port.refused == port.fenced[-1:]
    store = await open_store(str(tmp_path / "t.db"))
    try:
        assert await store.live_rooms() == []  # nothing was written
    finally:
        await store.close()


async def test_the_single_servers_port_writes_unfenced(tmp_path: Path) -> None:
    hub, made = await open_one(tmp_path / "t.db", Solo())
    try:
        assert [r for r, _, _ in await hub.store.live_rooms()] == made
    finally:
        await hub.store.close()
