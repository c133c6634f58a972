"""The composition root: builds the server's parts, wires them, runs them.

=================  ==========================================================================
part               its one job
=================  ==========================================================================
``edge``           the WebSocket and HTTP on one port: admit, rate-limit, parse, hand over
``players``        who a connection is (``hello``), and their coming and going
``ownership``      who owns each live thing (``Solo``; a cluster's ``Leases``), chosen here
``hub``            the live rooms by id: find or load, open, let idle ones go
``sweeps``         the rooms on disk nobody names: resumed, settled, expired
``LiveRoom``       one room's owner: check → persist → commit → send → reschedule
``lobby``          the list of rooms to join or watch (its listing: local, or shared)
``cluster``        a cluster's node (``--redis``): leases, relay, shared listing
``records``        a room of any status as a record: snapshot and chat, exports, review
``store``          every write and read of the database (given, already open)
``bots``           the process pool where bots think
``explainer``      the process where explain trees are built (out of the bots' way)
``metrics``        the server's figures (``/metrics``), moved by the parts that measure
``readiness``      whether the node can serve (``/readyz``)
=================  ==========================================================================

A move's path: ``edge`` (frame → :class:`~tablas.server.protocol.Move`) → the handler table below →
``hub.command`` (which room) → ``LiveRoom.run`` → ``store`` → ``Conn.send`` to every follower.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tablas.server.addresses import AddressBook
from tablas.server.blocklist import BlockList
from tablas.server.bot_pool import BotPool
from tablas.server.bot_turns import RoomShares
from tablas.server.caps import MAX_ROOMS_PER_ADDRESS, MAX_WAITING_ROOMS
from tablas.server.connections import Presence
from tablas.server.dice import SeedFactory
from tablas.server.edge import Edge, Http
from tablas.server.edge.http import API_RATE, EXPLAIN_NICE, EXPLAIN_WORKERS, web_folder
from tablas.server.edge.networks import LOOPBACK, AddressAllow, AddressKeys, parse_networks
from tablas.server.edge.websocket import MAX_CONNS_PER_ADDRESS, MAX_MSGS_PER_ADDRESS, Handler
from tablas.server.errors import StartupError
from tablas.server.hub import (
    ABANDON_AFTER,
    CLAIM_AFTER,
    EVICT_IDLE_AFTER,
    MAX_FINISHED_FOLLOWED,
    MAX_IDLE_ROOMS,
    SWEEP_EVERY,
    Hub,
)
from tablas.server.live_room import RoomServices
from tablas.server.lobby import Listing, Lobby, LocalRooms, RecentGames
from tablas.server.loop import quiet_collector
from tablas.server.meet.blocks import Blocks
from tablas.server.meet.challenges import EXPIRE_AFTER as CHALLENGE_EXPIRY
from tablas.server.meet.challenges import Challenges
from tablas.server.meet.online import Online
from tablas.server.meet.reach import LocalReach, Reach
from tablas.server.meet.seeks import Seeks
from tablas.server.meet.stats import Stats
from tablas.server.meet.tables import Tables
from tablas.server.metrics import Metrics, StateGauges
from tablas.server.ownership import Ownership, Solo
from tablas.server.players import Players
from tablas.server.protocol import (
    Abort,
    AcceptChallenge,
    AcceptResign,
    AcceptSeek,
    Berserk,
    Block,
    BlocksRequest,
    CancelChallenge,
    CancelSeek,
    ChallengeRequest,
    Chat,
    ClaimWin,
    CreateRoom,
    CreateTournament,
    DeclineChallenge,
    DeclineResign,
    HandToBot,
    Hello,
    InviteTournament,
    Join,
    JoinTournament,
    Leave,
    LeaveTournament,
    ListRooms,
    Move,
    Offer,
    Register,
    Rematch,
    Resign,
    Seed,
    SeekRequest,
    Spectate,
    StartTournament,
    Unblock,
)
from tablas.server.rated import RatedGames
from tablas.server.readiness import Readiness
from tablas.server.review_ahead import ReviewAhead
from tablas.server.room_records import Records
from tablas.server.standings import Standings
from tablas.server.store import Database, Storage, open_store
from tablas.server.sweeps import KEEP_ADJOURNED, Sweeps
from tablas.server.tournaments.keeper import Tournaments
from tablas.server.tournaments.views import TournamentViews

if TYPE_CHECKING:
    from tablas.server.cluster import Cluster, Leases, SharedReach

def in_turn(*steps: Callable[..., Awaitable[None]]) -> Callable[..., Awaitable[None]]:
    """One handler that runs ``steps`` one after the other with the same arguments; a step
    that fails stops the rest (a refused ``hello`` is nobody's arrival)."""

    async def run(*args: Any) -> None:
        for step in steps:
            await step(*args)

    return run


def each(*steps: Callable[..., Awaitable[None]]) -> Callable[..., Awaitable[None]]:
    """One handler that runs every one of ``steps`` with the same arguments, whatever the
    others do: a connection's goodbye must reach every part (a step that fails is logged)."""

    async def run(*args: Any) -> None:
        for step in steps:
            try:
                await step(*args)
            except Exception:
                log.exception("a goodbye's step failed: %s", getattr(step, "__qualname__", step))

    return run


log = logging.getLogger("tablas.server")


def default_node() -> str:
    """``--node``'s default: the host's name and the process id (unique on one host)."""
    return f"{socket.gethostname()}-{os.getpid()}"


class TablasServer:
    """The whole server, composed; :meth:`start` it, :meth:`close` it."""

    def __init__(
        self,
        store: Storage,
        bot_workers: int | None = None,
        *,
        clock: Callable[[], float] = time.time,
        seed_factory: SeedFactory | None = None,
        web: Path | None = None,
        bot_pause: float = 0.0,
        allow_origins: Sequence[str] | None = None,
        evict_idle_after: float = EVICT_IDLE_AFTER,
        sweep_every: float = SWEEP_EVERY,
        max_idle_rooms: int = MAX_IDLE_ROOMS,
        max_finished_followed: int = MAX_FINISHED_FOLLOWED,
        max_waiting_rooms: int | None = MAX_WAITING_ROOMS,
        max_conns_per_address: int | None = MAX_CONNS_PER_ADDRESS,
        max_msgs_per_address: float | None = MAX_MSGS_PER_ADDRESS,
        max_api_per_address: float | None = API_RATE,
        abandon_after: float | None = ABANDON_AFTER,
        keep_adjourned: float | None = KEEP_ADJOURNED,
        claim_after: float = CLAIM_AFTER,
        max_rooms_per_address: int | None = MAX_ROOMS_PER_ADDRESS,
        node: str | None = None,
        redis: str | None = None,
        lease_s: float | None = None,
        public_url: str | None = None,
        challenge_expiry: float = CHALLENGE_EXPIRY,
        metrics_allow: Sequence[str] = LOOPBACK,
        shared_address_ok: Sequence[str] = (),
        arena_minute_s: float = 60.0,
        review_ahead: bool = True,
    ) -> None:
        """``node``: this server's name (default: host name and pid); ``redis``: a Redis URL
        makes it a node of a cluster (``tablas.server.cluster``; the store must be PostgreSQL's),
        whose room leases last ``lease_s`` seconds and whose clients are sent to
        ``public_url`` (where they reach this node) for its rooms. ``clock``: the time rooms
        see (seconds); ``web``: the page's files (default: the package's own,
        :class:`~tablas.server.edge.http.MissingFiles` if they are missing). The limits are the
        parts' own (None lifts the cap on waiting rooms, connections, messages or ``/api/``
        requests per address, or rooms per address); ``abandon_after`` and
        ``keep_adjourned`` (seconds; None: never) say when rooms end (contract section 6),
        ``claim_after`` (seconds) when a player may claim the game of an opponent who left
        (section 10), ``challenge_expiry`` (seconds) when an unanswered challenge ends
        (section 11). ``metrics_allow``: the addresses and networks ``/metrics`` answers
        (section 14; a :class:`ValueError` for one that is neither); ``shared_address_ok``:
        the networks whose connections each count as an address of their own (section 15);
        ``arena_minute_s``: the seconds an arena's minute lasts (section 19);
        ``review_ahead``: judge each move in the background while games are played
        (:mod:`tablas.server.review_ahead`), so that a review is ready when its game ends."""
        self.node = node or default_node()
        allow = AddressAllow(parse_networks(metrics_allow))
        self.addresses = AddressKeys(parse_networks(shared_address_ok))
        # The server's own registry: a node of a cluster labels its samples with its name.
        self.metrics = Metrics(self.node if redis is not None else None)
        self.cluster: Cluster | None = None
        # Chosen once, here: a single server owns every room; a cluster's node holds leases.
        leases = self._leases(store, redis, lease_s) if redis is not None else None
        ownership: Ownership = leases if leases is not None else Solo()
        self.store = store
        self.port = 0  # bound by start()
        store.time_commits(self.metrics.commit)
        self.bots = BotPool(bot_workers, metrics=self.metrics)
        # Explain trees have processes of their own (server.edge.http.Http says why).
        self.explainer = BotPool(EXPLAIN_WORKERS, nice=EXPLAIN_NICE, live=False)
        self.presence = Presence()
        recent = RecentGames(clock)
        blocklist = BlockList()
        # Who shared an address, for ratings (section 16); self.addresses says what one is.
        self.address_book = AddressBook(store, clock)
        shares = RoomShares()
        self.reviews = ReviewAhead(self.bots, shares, on=review_ahead)
        self.services = RoomServices(store, self.bots, self.presence, clock,
                                     ownership=ownership, games=recent, blocklist=blocklist,
                                     bot_pause=bot_pause, abandon_after=abandon_after,
                                     claim_after=claim_after,
                                     rated=RatedGames(store, clock, self.address_book),
                                     metrics=self.metrics, shares=shares, moves=self.reviews)
        self.hub = Hub(self.services, seed_factory=seed_factory,
                       evict_idle_after=evict_idle_after, sweep_every=sweep_every,
                       max_idle_rooms=max_idle_rooms,
                       max_finished_followed=max_finished_followed,
                       max_waiting_rooms=max_waiting_rooms,
                       max_rooms_per_address=max_rooms_per_address)
        self.sweeps = Sweeps(self.hub, keep_adjourned=keep_adjourned)
        self.players = Players(store, self.presence, self.hub, clock, self.address_book)
        listing: Listing = LocalRooms(self.hub)
        hello: Handler = self.players.hello
        goodbye = self.players.goodbye
        command: Handler = self.hub.command
        rematch: Handler = self.hub.rematch
        bus = None
        reach: Reach = LocalReach(self.node, self.presence)
        if leases is not None and redis is not None:
            from tablas.server.cluster import Bus, SharedReach

            bus = Bus(self.node, redis, leases.lease_s, public_url)
            reach = SharedReach(bus, self.presence)
        tables = Tables(self.hub, reach)
        self.blocks = Blocks(store, blocklist, clock)
        self.seeks = Seeks(store, tables, reach, self.blocks, clock,
                           max_per_address=max_rooms_per_address)
        self.challenges = Challenges(store, tables, reach, self.presence, self.blocks,
                                     max_per_address=max_rooms_per_address,
                                     expire_after=challenge_expiry, metrics=self.metrics)
        self.tournaments = Tournaments(store, self.hub, reach, ownership, clock,
                                       minute_s=arena_minute_s)
        if leases is not None and bus is not None:
            from tablas.server.cluster import Cluster, MeetListener, Relay, SharedListing

            shared = SharedListing(leases.store, bus.redis, self.hub, listing)
            relay = Relay(bus, leases, leases.store, self.hub, self.presence, self.players,
                          self.metrics)
            meet = MeetListener(bus, cast("SharedReach", reach), relay, self.challenges,
                                store.seeks)
            self.cluster = Cluster(leases, bus, relay, shared, meet, in_use=self._in_use)
            listing = shared
            hello, goodbye = relay.hello, relay.goodbye
            command = rematch = relay.command
        self.lobby = Lobby(listing, recent)
        handlers: dict[type[Any], Handler] = {
            Hello: in_turn(hello, reach.arrived, self.tournaments.arrived, self.blocks.arrived),
            Register: self.players.register,
            ListRooms: self.lobby.list_rooms,
            CreateRoom: self.hub.create_room,
            Rematch: rematch,
            **dict.fromkeys((Join, Spectate, Leave, Move, Resign, Chat, HandToBot, Seed,
                             Abort, ClaimWin, AcceptResign, DeclineResign, Offer, Berserk),
                             command),
            SeekRequest: self.seeks.seek,
            CancelSeek: self.seeks.cancel,
            AcceptSeek: self.seeks.accept,
            ChallengeRequest: self.challenges.challenge,
            AcceptChallenge: self.challenges.accept,
            DeclineChallenge: self.challenges.decline,
            CancelChallenge: self.challenges.cancel,
            CreateTournament: self.tournaments.create,
            JoinTournament: self.tournaments.join,
            LeaveTournament: self.tournaments.leave,
            StartTournament: self.tournaments.start,
            Block: self.blocks.block,
            Unblock: self.blocks.unblock,
            BlocksRequest: self.blocks.listing,
            InviteTournament: self.tournaments.entries.invite,
        }
        self.records = Records(self.hub, self.reviews)
        tournament_views = TournamentViews(store)
        cluster = self.cluster
        services = self.services
        # The store is open from before the server is built until its shutdown begins.
        self.readiness = Readiness(lambda: not (store.closed or services.closing),
                                   None if cluster is None else lambda: cluster.bus.reached)
        hub_rooms = self.hub.rooms
        self.metrics.watch(StateGauges(
            connections=lambda: len(self.presence.conns),
            rooms=lambda: [live.room.status for live in hub_rooms.values()],
            bot_queue=self.bots.queued))
        http = Http(web if web is not None else web_folder(), self.lobby.http_body,
                    self.explainer, self.records, Standings(store), self.node,
                    max_api_per_address=max_api_per_address,
                    feeds={"/api/seeks": self.seeks.http_body,
                           "/api/stats": Stats(store, reach).http_body,
                           "/api/online": Online(store, reach).http_body,
                           "/api/tournaments": tournament_views.listing},
                    lookups={"/api/tournaments/": tournament_views.detail},
                    sheets={"/api/tournaments/crosstable": tournament_views.crosstable},
                    metrics=self.metrics, readiness=self.readiness, metrics_allow=allow)
        # A connection that closes takes its seeks and challenges with it first, so that
        # nobody is paired with a player already gone.
        self.edge = Edge(handlers, self.presence,
                         each(self.seeks.gone, self.challenges.gone, goodbye, reach.left),
                         http, metrics=self.metrics, allow_origins=allow_origins,
                         max_conns_per_address=max_conns_per_address,
                         max_msgs_per_address=max_msgs_per_address,
                         addresses=self.addresses)

    def _in_use(self, key: str) -> bool:
        """Whether this process holds ``key`` in memory: a room or a tournament (their
        leases are renewed while it does)."""
        return self.hub.in_use(key) or self.tournaments.in_use(key)

    def _leases(self, store: Storage, redis: str, lease_s: float | None) -> Leases:
        """A cluster's node's ownership: the leases (``--redis``; PostgreSQL's store)."""
        from tablas.server.store.postgres import PostgresStore

        if not isinstance(store, PostgresStore):
            raise StartupError("--redis runs a node of a cluster, whose nodes share a "
                               "PostgreSQL database: give --db postgresql://…")
        # Only a cluster's node needs redis (the cluster extra).
        try:
            from tablas.server.cluster import LEASE_S, Leases
        except ImportError as e:
            raise StartupError(f"a cluster's node needs {e.name}: "
                               "pip install 'tablas[cluster]'") from None
        return Leases(store, self.node, LEASE_S if lease_s is None else lease_s)

    async def start(self, host: str, port: int) -> int:
        """Listens on ``host:port`` (0: any free port), then does what comes before anyone
        is served (a cluster's node waits for Redis; names get their skeletons) while only
        ``/healthz``, ``/readyz`` and ``/metrics`` answer, then starts the hub's background
        work (rooms are loaded when named, :mod:`tablas.server.hub`) and serves; the port
        actually bound."""
        self.port = await self.edge.start(host, port)
        if self.cluster is not None:
            await self.cluster.start()
        await self.players.backfill_skeletons()  # before anyone may take a name
        # The seeks a previous run left (their connections are gone): a cluster's node
        # withdraws its own, a single server every one.
        await self.seeks.start(self.node if self.cluster is not None else None)
        self.hub.start()
        self.sweeps.start()
        self.address_book.start()
        self.tournaments.start_owning()
        self.readiness.started = True
        return self.port

    async def close(self) -> None:
        """Graceful shutdown: stop bots and timers, close sockets with a reason, finish the
        writes."""
        self.services.closing = True
        self.challenges.stop()
        self.tournaments.stop()
        self.sweeps.stop()
        self.address_book.stop()
        self.hub.stop()
        self.records.stop()
        self.reviews.stop()
        await self.edge.close()
        await self.hub.drain()
        self.bots.shutdown()
        self.explainer.shutdown()
        if self.cluster is not None:
            await self.cluster.close()
        await self.store.close()


async def run(host: str, port: int, db: str | Database, bot_workers: int | None,
              allow_origins: Sequence[str] | None = None,
              max_conns_per_address: int | None = MAX_CONNS_PER_ADDRESS,
              max_msgs_per_address: float | None = MAX_MSGS_PER_ADDRESS,
              max_api_per_address: float | None = API_RATE,
              abandon_after: float | None = ABANDON_AFTER,
              keep_adjourned: float | None = KEEP_ADJOURNED,
              node: str | None = None, redis: str | None = None,
              lease_s: float | None = None, claim_after: float = CLAIM_AFTER,
              max_rooms_per_address: int | None = MAX_ROOMS_PER_ADDRESS,
              metrics_allow: Sequence[str] = LOOPBACK, public_url: str | None = None,
              shared_address_ok: Sequence[str] = (), arena_minute_s: float = 60.0,
              review_ahead: bool = True) -> None:
    """``tablas serve`` on the database ``db`` names (a SQLite file, or a URL:
    :func:`tablas.server.store.open_store`): runs until SIGTERM/SIGINT, then shuts down gracefully
    (with the garbage collector as :func:`tablas.server.loop.quiet_collector` sets it for
    serving)."""
    import signal

    async with quiet_collector():
        web = web_folder()  # a broken install stops here, before anything starts
        store = await open_store(db)
        try:
            server = TablasServer(store, bot_workers, web=web, allow_origins=allow_origins,
                                  max_conns_per_address=max_conns_per_address,
                                  max_msgs_per_address=max_msgs_per_address,
                                  max_api_per_address=max_api_per_address,
                                  abandon_after=abandon_after, keep_adjourned=keep_adjourned,
                                  claim_after=claim_after,
                                  max_rooms_per_address=max_rooms_per_address,
                                  node=node, redis=redis, lease_s=lease_s,
                                  metrics_allow=metrics_allow, public_url=public_url,
                                  shared_address_ok=shared_address_ok,
                                  arena_minute_s=arena_minute_s, review_ahead=review_ahead)
        except BaseException:
            await store.close()
            raise
        try:
            await server.start(host, port)
        except OSError as e:
            await server.close()
            raise StartupError(f"cannot serve on {host}:{port}: {e.strerror or e}") from None
        except BaseException:
            await server.close()
            raise
        print(f"http://{host}:{port if port else server.port}/", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        log.info("shutting down")
        await server.close()
