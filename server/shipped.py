"""The folders the package ships beside its code: the page (``client/``) and the database
migrations (``migrations/``).

In the repository they sit at the top level, beside ``server/`` and ``engine/``; installed,
all four are subpackages of the one import package ``tablas`` (``tablas/client``,
``tablas/migrations``). Either way the folder is the sibling of the installed ``server``
package, which :mod:`importlib.resources` finds for a wheel and an editable install alike.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from tablas.server.errors import MissingFiles


def package_folder(name: str, must_hold: str) -> Path:
    """The shipped folder ``name`` (``"client"``, ``"migrations/sqlite"``), checked to hold
    ``must_hold``; :class:`MissingFiles` otherwise: the install is broken, and the message
    tells the operator to reinstall."""
    server = resources.files("tablas.server")
    if not isinstance(server, Path):
        raise MissingFiles(f"tablas is installed where its files cannot be read as files "
                           f"({server!r}); install it unpacked: pip install tablas")
    folder = server.parent.joinpath(*name.split("/"))
    if not (folder / must_hold).exists():
        raise MissingFiles(f"the package's files are missing: no {folder / must_hold} "
                           "(reinstall tablas: pip install --force-reinstall tablas)")
    return folder
