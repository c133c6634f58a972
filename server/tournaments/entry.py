"""Who may enter a tournament (contract section 17, "Tournaments for bots"): open to any
registered player (the default), or by invitation: ``create_tournament``'s ``"entry":
"invite"`` and ``"invited": [NAME, …]``, more names from its creator while it waits
(``invite_tournament``). A ``join_tournament`` of anyone not invited is refused
(``bad_request``) and changes nothing. Names are compared by their key (NFKC, casefold), as
logins compare them."""

from __future__ import annotations

from collections.abc import Sequence

from tablas.server.accounts import name_key
from tablas.server.connections import Conn, Player
from tablas.server.errors import MeetError
from tablas.server.protocol import InviteTournament, TournamentChanged, clean_name
from tablas.server.store import Storage
from tablas.server.store.invites import Entry


def _keyed(names: Sequence[str], re: str | int | None) -> list[tuple[str, str]]:
    keyed: dict[str, str] = {}
    for raw in names:
        try:
            name = clean_name(raw)
        except ValueError as e:
            raise MeetError("bad_request", f"invited name {raw!r}: {e}", re) from None
        keyed.setdefault(name_key(name), name)
    return list(keyed.items())


class Entries:
    def __init__(self, store: Storage) -> None:
        self.store = store
        self.invites = store.invites

    @staticmethod
    def checked(entry: Entry, names: Sequence[str], re: str | int | None
                ) -> list[tuple[str, str]]:
        """A new tournament's invitations (name key, name), checked before anything is
        written or claimed: a bad name, or names for an open tournament, refuse it."""
        keyed = _keyed(names, re)
        if entry == "open" and keyed:
            raise MeetError("bad_request", "invited names go with \"entry\": \"invite\"", re)
        return keyed

    async def created(self, tournament_id: str, entry: Entry,
                      keyed: Sequence[tuple[str, str]]) -> None:
        """A new tournament's entry, written before the tournament itself."""
        if entry == "invite":
            await self.invites.set_entry(tournament_id, entry, keyed)

    async def check(self, tournament_id: str, player: Player, re: str | int | None) -> None:
        """Refuses ``player``'s entry to an invite-only tournament they are not invited to."""
        if await self.invites.entry(tournament_id) == "invite" and \
                not await self.invites.invited(tournament_id, name_key(player.name)):
            raise MeetError("bad_request", "this tournament is by invitation, and you are "
                            "not invited", re)

    async def invite(self, conn: Conn, msg: InviteTournament) -> None:
        """Its creator invites more names while it waits."""
        player = conn.player
        assert player is not None
        found = await self.store.tournaments.load(msg.tournament_id)
        if found is None:
            raise MeetError("bad_request", "no such tournament", msg.id)
        t = found[0]
        if t.created_by != player.id:
            raise MeetError("bad_request", "only its creator invites to a tournament", msg.id)
        if t.status != "waiting":
            raise MeetError("bad_request", "the tournament has started (or ended): no more "
                            "changes", msg.id)
        if await self.invites.entry(msg.tournament_id) != "invite":
            raise MeetError("bad_request", "this tournament is open to every registered "
                            "player: nobody needs an invitation", msg.id)
        await self.invites.invite(msg.tournament_id, _keyed(msg.names, msg.id))
        conn.send(TournamentChanged(type="tournament_invited", re=msg.id,
                                    tournament_id=msg.tournament_id))
