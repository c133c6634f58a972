"""The store interface, :class:`Storage`: what the server asks of a database, whatever it is.

The rest of the server types against :class:`Storage` and nothing else. A backend is a
subclass (:mod:`tablas.server.store.sqlite`, :mod:`tablas.server.store.postgres`) that gives it a
way to run a batch of writes as one transaction (:meth:`Storage._transaction`), the reads, and its
migrations. What every backend shares lives here, written once:

- the write methods (``create_room``, ``record_move``, …): each builds a write, a few rows
  ``[kind, a, b, …]`` whose ``kind`` names what the database does with them (a trigger of
  the view ``store_write`` in SQLite, a function ``store_write_KIND`` in PostgreSQL), and
  returns once the transaction holding it is committed: the store hands it to its group
  commit (:class:`~tablas.server.store.commit.GroupCommit`, :mod:`tablas.server.store.commit`),
  which joins the writes of many rooms into one transaction;
- the migrations' files: ``NNNN_name.sql``, numbered 1..n, one folder per backend.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from typing import Any

from tablas.engine.core import Outcome
from tablas.engine.search.decision import check_level
from tablas.server.dice import Seeds
from tablas.server.ownership import Fence
from tablas.server.protocol import RoomOptions, json_text
from tablas.server.ratings import Rating, RatingChange, bot_level
from tablas.server.room import Action, Dice, RoomRecord, SeatState, Status
from tablas.server.shipped import package_folder
from tablas.server.store.addresses import AddressStore
from tablas.server.store.blocks import BlockStore
from tablas.server.store.commit import CommitObserver, CommitStats, GroupCommit, Write, _row
from tablas.server.store.invites import InviteStore
from tablas.server.store.player_writes import PlayerWrites
from tablas.server.store.player_writes import token_hash as token_hash
from tablas.server.store.players import PlayerReads
from tablas.server.store.seeks import SeekStore
from tablas.server.store.tournaments import TournamentStore

_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


def migrations_folder(backend: str = "sqlite") -> Traversable:
    """A backend's migrations shipped with the package (``migrations/BACKEND/``), wherever
    it is installed; :class:`~tablas.server.errors.MissingFiles` if they are not there."""
    return package_folder(f"migrations/{backend}", "0001_initial.sql")


def migration_files(folder: Traversable | None = None) -> list[tuple[int, str, str]]:
    """``(version, name, sql)`` for every migration file, in version order (by default
    SQLite's)."""
    folder = migrations_folder() if folder is None else folder
    out = []
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        m = _MIGRATION_NAME.match(path.name)
        if m:
            out.append((int(m.group(1)), path.name, path.read_text(encoding="utf-8")))
    versions = [v for v, _, _ in out]
    if versions != list(range(1, len(out) + 1)):
        raise RuntimeError(f"migrations in {folder} must be numbered 1..n, found {versions}")
    return out


def _finish(room_id: str, outcome: Outcome, when: float, clocks: Sequence[int] | None
            ) -> list[list[Any]]:
    c0, c1 = clocks if clocks is not None else (None, None)
    return [_row("result", room_id, outcome.winner, outcome.points, outcome.reason, when, c0, c1),
            _row("room_finished", room_id)]


def holders(rows: Iterable[Sequence[Any]]) -> tuple[Account | None, Account | None]:
    """The backends' :meth:`Storage.name_holders` from its rows (id, name, password hash,
    whether the key matched, whether the skeleton did)."""
    by_key = by_skeleton = None
    for pid, name, password_hash, key_matched, skeleton_matched in rows:
        account = Account(str(pid), str(name), True, str(password_hash))
        if key_matched:
            by_key = account
        if skeleton_matched:
            by_skeleton = account
    return by_key, by_skeleton


def pair_match(players: tuple[str, str]) -> tuple[str, tuple[str, str]]:
    """A rated pair as the backends' pair query finds its seats: the id of a person of it
    (found through the index on seats by player), and how the other's seat holds them: its
    ``kind``, and its ``level`` for a bot level or its ``player_id`` for a person."""
    a, b = players
    if bot_level(a) is not None:
        a, b = b, a
    if bot_level(a) is not None:
        raise ValueError(f"bot against bot is never rated: {players}")
    level = bot_level(b)
    return a, (("human", b) if level is None else ("bot", level))


def _unrated(room_id: str, reason: str | None) -> list[list[Any]]:
    """The row that makes a rated room unrated, saying why (none for ``None``)."""
    return [] if reason is None else [_row("room_unrated", room_id, reason)]


def _rated(room_id: str, changes: Sequence[RatingChange]) -> list[list[Any]]:
    """A rated game's new ratings and what it did to them (migration 0008): written with
    the result, so a finished rated game is rated exactly once, crash or not."""
    rows: list[list[Any]] = []
    for c in changes:
        a = c.after
        rows.append(_row("rating", c.player_id, c.game, a.rating, a.rd, a.volatility, a.games))
        rows.append(_row("rating_change", room_id, c.seat, c.player_id, c.score,
                         c.before.rating, c.before.rd, a.rating, a.rd))
    return rows


@dataclass(frozen=True)
class Account:
    """A player as ``hello`` finds them: by token, or (registered) by name key."""

    player_id: str
    name: str
    registered: bool
    password_hash: str | None = None
    bot: bool = False  # a bot account (contract section 12)


def _rolls(text: str | None) -> list[Dice]:
    return [(int(a), int(b)) for a, b in json.loads(text or "[]")]


def _seeds(text: str) -> Seeds:
    a, b = json.loads(text)
    return str(a), str(b)


def _rolls_text(rolls: Sequence[Dice]) -> str:
    """The inverse of :func:`_rolls`."""
    return json_text([list(r) for r in rolls]) if rolls else "[]"


def _save_status(room_id: str, status: Status, opening_rolls: Sequence[Dice]) -> list[Any]:
    """The room's status and opening roll: what a filled or handed-over seat can change."""
    return _row("room_status", room_id, status, _rolls_text(opening_rolls))


def _save_seeds(room_id: str, seeds: Seeds | None) -> list[list[Any]]:
    """The seats' dice seeds (a JSON list); none written for a room without them, whose
    NULL column means the roll message without seeds (docs/dice.md)."""
    return [] if seeds is None else [_row("room_seeds", room_id, json_text(list(seeds)))]


def room_record(
    room_id: str,
    room: Sequence[Any],
    seats: Sequence[Sequence[Any]],
    moves: Sequence[Sequence[Any]],
    result: Sequence[Any] | None,
    changes: Sequence[Sequence[Any]] = (),
    berserk: Sequence[Any] | None = None,
) -> RoomRecord:
    """A room as read back, from its rows (the same columns, in the same order, in every
    backend): ``room`` (game, options, status, dice_seed, opening_dice, created_at,
    room_options, created_by, status_at, dice_seeds), ``seats`` (seat, kind, level,
    player_id, the player's name, whether that player is a bot account) in seat order,
    ``moves`` (ply, seat, move, dice, created_at, clock0_ms, clock1_ms) in ply order,
    ``result`` (winner, points, reason, clock0_ms, clock1_ms) or None, ``changes`` (seat,
    rating_before, rating_after) of a rated game's end in seat order; ``berserk``
    (berserk0, berserk1) of an arena game's row in ``tournament_games``, or None."""
    (game_id, options, status, seed, opening, created_at, ropts, created_by, status_at,
     seeds) = room
    actions = [
        Action(int(ply), int(seat), json.loads(move), tuple(_rolls(dice)), float(t),
               None if c0 is None or c1 is None else (int(c0), int(c1)))
        for ply, seat, move, dice, t, c0, c1 in moves
    ]
    if [a.index for a in actions] != list(range(len(actions))):
        raise RuntimeError(f"room {room_id}: the stored plies have a gap")
    res = result
    return RoomRecord(
        room_id=room_id,
        game_id=str(game_id),
        options=json.loads(options),
        status=status,
        # Written as hexadecimal text (a batch travels as JSON); an older SQLite room's is
        # a BLOB, PostgreSQL's a bytea: bytes either way.
        seed=None if seed is None else bytes.fromhex(seed) if isinstance(seed, str)
        else bytes(seed),
        created_at=float(created_at),
        seats=[SeatState(kind, None if level is None else check_level(level), player_id, name,
                         bot=bool(bot))
               for _seat, kind, level, player_id, name, bot in seats],
        seeds=None if seeds is None else _seeds(seeds),
        opening_rolls=_rolls(opening),
        actions=actions,
        result=None if res is None else Outcome(res[0], int(res[1]), str(res[2])),
        room_options=RoomOptions.model_validate(json.loads(ropts or "{}")),
        final_clocks=(None if res is None or res[3] is None or res[4] is None
                      else [int(res[3]), int(res[4])]),
        created_by=created_by,
        status_at=None if status_at is None else float(status_at),
        rating_change=[{"before": float(b), "after": float(a)} for _s, b, a in changes]
        if len(changes) == 2 else None,
        berserk=(0, 0) if berserk is None else (int(berserk[0]), int(berserk[1])),
    )


class Storage(PlayerReads, PlayerWrites, ABC):
    """The store: every write and read of the server's database. Open a backend with
    :func:`tablas.server.store.open_store` (which migrates), close it with :meth:`close`.

    The write methods return once their write is committed, durably (the group commit);
    the reads never see a transaction half done."""

    # Tables behind interfaces of their own: every node's open seeks (contract section 11),
    # tournaments (13), who blocked whom (15), players' keyed address hashes (16), who may
    # enter a tournament: open, or by invitation (17).
    seeks: SeekStore
    tournaments: TournamentStore
    blocks: BlockStore
    addresses: AddressStore
    invites: InviteStore

    def __init__(self) -> None:
        # The group commit holds it while a batch is written; SQLite's reads take it too.
        self._lock = asyncio.Lock()
        self._commits = GroupCommit(self._transaction, self._lock, self._is_lease_lost)
        self.closed = False  # close() has begun: nothing more is written

    def time_commits(self, observe: CommitObserver) -> None:
        """``observe(writes, seconds)`` after every group commit (a server's metrics, wired
        by its composition root: the store is opened, and migrated, before the server is
        built)."""
        self._commits.observers.append(observe)

    @property
    def commit_stats(self) -> CommitStats:
        """The group commit's running totals since the store opened."""
        return self._commits.stats

    # --- what a backend provides -----------------------------------------------------------

    @abstractmethod
    async def _transaction(self, writes: Sequence[Write]) -> None:
        """Every row of ``writes``, in order, in one transaction: committed durably before
        this returns, or not written at all (and the exception raised)."""

    def _is_lease_lost(self, error: Exception) -> bool:
        """Whether ``error`` is the database refusing a 'fence' row."""
        return "lease lost" in str(error)

    @abstractmethod
    async def _close_database(self) -> None:
        """Close the connection(s); every write handed over is written by then."""

    @abstractmethod
    async def schema_version(self) -> int:
        """The newest migration applied (0: none)."""

    @abstractmethod
    async def migrate(self, upto: int | None = None) -> int:
        """Applies every migration newer than the database (up to ``upto``); the new
        version."""

    @abstractmethod
    async def account_by_token(self, token: str) -> Account | None:
        """The player a token is of: the token of their first ``welcome`` or of a login."""

    @abstractmethod
    async def account_by_key(self, name_key: str) -> Account | None:
        """The registered player whose name has this key (casefold of NFKC), with the hash
        of their password."""

    @abstractmethod
    async def name_holders(self, name_key: str, name_skeleton: str
                           ) -> tuple[Account | None, Account | None]:
        """In one read (every new guest's ``hello`` asks): the registered player whose name
        has this key, and the one who holds this name skeleton (:mod:`tablas.server.names`)."""

    @abstractmethod
    async def names_without_skeleton(self, limit: int) -> list[tuple[str, str]]:
        """Registered players with no name skeleton yet (registered before migration 11):
        (player id, name), the earliest registered first."""

    @abstractmethod
    async def count_playing(self) -> int:
        """How many rooms have a game in play (``GET /api/stats``' ``playing``)."""

    @abstractmethod
    async def ratings_of(self, game: str, player_ids: Sequence[str]) -> dict[str, Rating]:
        """Each of ``player_ids``' rating in ``game`` (a new rating for one never rated)."""

    @abstractmethod
    async def rated_games_between(self, game: str, players: tuple[str, str], since: float,
                                  *, playing: bool) -> int:
        """How many games of ``game`` between ``players`` (rated ids: a person's, or a bot
        level's :func:`~tablas.server.ratings.bot_rating_id`) changed ratings and finished after
        ``since``; with ``playing``, also the rated ones being played (contract section
        10's pair cap)."""

    @abstractmethod
    async def leaderboard(self, game: str, limit: int) -> list[tuple[str, str | None, Rating]]:
        """The ``limit`` best rated in ``game``: (player id, name (None for a bot), rating),
        by rating, then the smaller RD, the more games, the player id."""

    @abstractmethod
    async def player_info(self, player_id: str) -> tuple[str, bool] | None:
        """A player's name and whether they are registered; None for no such player."""

    @abstractmethod
    async def bot_accounts(self, player_ids: Sequence[str]) -> set[str]:
        """Those of ``player_ids`` that are bot accounts (migration 14): players, so a bot
        level's rated id (``bot:GAME:LEVEL``) is never one."""

    @abstractmethod
    async def ratings_by_game(self, player_id: str) -> dict[str, Rating]:
        """Every game ``player_id`` is rated in, and the rating."""

    @abstractmethod
    async def games_of(self, player_id: str, limit: int) -> list[dict[str, Any]]:
        """The player's ``limit`` latest rooms (seated in them), newest first: each
        ``{room_id, game, status, created_at, room_options, result, seats}`` with the seats'
        kind, level, player id and name."""

    @abstractmethod
    def _refused(self, error: Exception) -> str | None:
        """The message of ``error`` if the database refused a write for its content (a
        constraint, a check of a write's own), None for any other failure."""

    @abstractmethod
    async def seat_changes(self, room_id: str) -> list[dict[str, Any]]:
        """The room's seat handovers, oldest first: seat, ply, from_player, kind, level,
        reason, created_at."""

    @abstractmethod
    async def chat_lines(self, room_id: str, limit: int) -> list[dict[str, Any]]:
        """The room's last ``limit`` chat lines, oldest first, as the ``chat`` message carries
        them (``name`` is the name its player goes by now)."""

    @abstractmethod
    async def review(self, room_id: str) -> str | None:
        """The room's stored review (JSON text), None if it has none yet."""

    @abstractmethod
    async def live_rooms(self) -> list[tuple[str, Status, bool]]:
        """Every room waiting or being played: (id, status, whether it plays on by itself:
        no person sits in it, absent people's seats go to bots, or it is rated with a clock,
        which runs whoever is away: contract section 10), oldest first."""

    @abstractmethod
    async def adjourned_before(self, before: float, limit: int) -> list[str]:
        """Up to ``limit`` rooms adjourned before ``before``, oldest first."""

    @abstractmethod
    async def seats_held(self, player_id: str) -> list[tuple[str, int, Status]]:
        """Every seat ``player_id`` holds in a room that may still be played (waiting,
        playing or adjourned): (room id, seat, the room's status), oldest room first (rooms
        created at the same time: in the order they were written)."""

    @abstractmethod
    async def waiting_rooms_opened_by(self, player_id: str) -> list[str]:
        """The waiting rooms ``player_id`` opened (seated in them or not), oldest first."""

    @abstractmethod
    async def load_room(self, room_id: str) -> RoomRecord | None:
        """The room as stored (see :func:`room_record`), None if there is no such room."""

    # --- closing ---------------------------------------------------------------------------

    async def close(self) -> None:
        self.closed = True
        await self._commits.drain()  # moves already handed to the store are written first
        await self._close_database()

    # --- rooms -----------------------------------------------------------------------------

    async def create_room(
        self,
        room_id: str,
        game_id: str,
        options: dict[str, Any],
        seats: Sequence[SeatState],
        status: Status,
        seed: bytes | None,
        opening_rolls: Sequence[Dice],
        created_at: float,
        room_options: RoomOptions | None = None,
        created_by: str | None = None,
        seeds: Seeds | None = None,
        *,
        fence: Fence | None = None,
    ) -> None:
        """The room with its seats, its creator and its seats' dice seeds, in one
        transaction."""
        ropts = (room_options or RoomOptions()).model_dump(mode="json")
        await self._commits.write(
            _row("room", room_id, game_id, json_text(options), status,
                 None if seed is None else seed.hex(), _rolls_text(opening_rolls), created_at,
                 json_text(ropts)),
            *(_row("seat", room_id, i, s.kind, s.level, s.player_id)
              for i, s in enumerate(seats)),
            *([] if created_by is None else [_row("room_creator", room_id, created_by)]),
            *_save_seeds(room_id, seeds),
            fence=fence,
        )

    async def set_status(self, room_id: str, status: Status, at: float, *,
                         fence: Fence | None = None) -> None:
        """A change of status without a move (adjourned, closed, playing again)."""
        await self._commits.write(_row("room_lapse", room_id, status, at), fence=fence)

    async def set_statuses(self, changes: Sequence[tuple[str, Status]], at: float) -> None:
        """:meth:`set_status` for many rooms in one transaction (rooms not in memory)."""
        if changes:
            await self._commits.write(*(_row("room_lapse", r, status, at)
                                        for r, status in changes))

    async def expire(self, room_ids: Sequence[str], at: float) -> None:
        """Adjourned games nobody resumed end in one transaction, without a winner."""
        outcome = Outcome(winner=None, points=0, reason="expired")
        if room_ids:
            await self._commits.write(*(row for r in room_ids
                                        for row in _finish(r, outcome, at, None)))

    async def save_seats(
        self,
        room_id: str,
        seats: Sequence[SeatState],
        status: Status,
        opening_rolls: Sequence[Dice],
        seeds: Seeds | None = None,
        unrated: str | None = None,
        *,
        fence: Fence | None = None,
    ) -> None:
        """Seat holders, their dice seeds, and the start of the game (status, opening roll),
        in one transaction; ``unrated``: why a rated room is rated no more from its pairing
        on (``pair_cap``, ``shared_address``: contract sections 10 and 16)."""
        await self._commits.write(
            *(_row("seat_holder", room_id, i, s.player_id) for i, s in enumerate(seats)),
            *_save_seeds(room_id, seeds),
            *_unrated(room_id, unrated),
            _save_status(room_id, status, opening_rolls),
            fence=fence,
        )

    async def record_move(
        self, room_id: str, action: Action, outcome: Outcome | None,
        ratings: Sequence[RatingChange] = (), *, unrated: str | None = None,
        fence: Fence | None = None,
    ) -> None:
        """One action (and the end of the game, if it ends it, with the ``ratings`` it
        changes, or ``unrated``: why a rated game rates nobody after all), committed durably
        before this returns. The caller holds its room's lock, so a batch never holds two
        moves of one room."""
        move = _row("move", room_id, action.index, action.seat, json_text(action.move),
                    _rolls_text(action.rolls), action.time, *(action.clocks or (None, None)))
        if outcome is None:
            await self._commits.write(move, fence=fence)
        else:
            await self._commits.write(move,
                                      *_finish(room_id, outcome, action.time, action.clocks),
                                      *_rated(room_id, ratings), *_unrated(room_id, unrated),
                                      fence=fence)

    async def record_result(
        self, room_id: str, outcome: Outcome, clocks: Sequence[int] | None = None,
        when: float | None = None, ratings: Sequence[RatingChange] = (), *,
        unrated: str | None = None, fence: Fence | None = None,
    ) -> None:
        """The end of a game that no move ended (a resignation, a timeout), with the
        ``ratings`` it changes (or ``unrated``, as :meth:`record_move`), in one
        transaction."""
        at = time.time() if when is None else when
        await self._commits.write(*_finish(room_id, outcome, at, clocks),
                                  *_rated(room_id, ratings), *_unrated(room_id, unrated),
                                  fence=fence)

    async def hand_seat_to_bot(
        self,
        room_id: str,
        seat: int,
        level: str,
        ply: int,
        from_player: str | None,
        reason: str,
        when: float,
        status: Status,
        opening_rolls: Sequence[Dice],
        seeds: Seeds | None = None,
        *,
        fence: Fence | None = None,
    ) -> None:
        """A seat becomes a bot's (logged in ``seat_changes``), and the room's status (a
        handover can start a waiting game), in one transaction."""
        await self._commits.write(
            _row("seat_to_bot", room_id, seat, level),
            _row("seat_change", room_id, seat, ply, from_player, level, reason, when),
            *_save_seeds(room_id, seeds),
            _save_status(room_id, status, opening_rolls),
            fence=fence,
        )

    async def take_back(self, room_id: str, ply: int, clocks: Sequence[int] | None, *,
                        fence: Fence | None = None) -> None:
        """The actions from ``ply`` on are taken back (contract section 7): deleted, so that
        the room replays without them; the action now last carries ``clocks`` (the time
        spent stays spent)."""
        c0, c1 = clocks if clocks is not None and ply > 0 else (None, None)
        await self._commits.write(_row("takeback", room_id, ply, c0, c1), fence=fence)

    async def record_chat(self, room_id: str, player_id: str, text: str, when: float, *,
                          audience: str = "players", fence: Fence | None = None) -> None:
        await self._commits.write(_row("chat", room_id, player_id, text, when, audience),
                                  fence=fence)

    async def save_review(self, room_id: str, text: str, when: float) -> None:
        """A finished game's review, as the JSON text it is served as (the first one stays)."""
        await self._commits.write(_row("review", room_id, text, when))
