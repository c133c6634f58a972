"""Persistence: the store a server writes every change through before anyone hears of it.

:mod:`server.store.sqlite` is the embedded backend (aiosqlite); its schema is the numbered SQL
files of ``server/store/migrations/``, shipped with the package.
"""

from server.store.sqlite import CommitStats, Store, migration_files, token_hash

__all__ = ["CommitStats", "Store", "migration_files", "token_hash"]
