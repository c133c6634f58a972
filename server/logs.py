"""How ``tablas serve`` writes its log: plain lines for people, JSON lines for operators.

Quiet by default: what happens to games (a room opened, a game started or ended, adjourned,
closed) and what goes wrong, at INFO and above. websockets' own lines (one per HTTP answer and
per connection) show only with ``--log-level debug``. A room's events carry ``room_id`` and
``event`` as fields of their JSON line, so a log pipeline can follow one room.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

LEVELS = ("debug", "info", "warning", "error")
# Fields a record may carry (``extra=``) that a JSON line includes as they are.
FIELDS = ("room_id", "event", "game", "status", "result")


class JsonLines(logging.Formatter):
    """One JSON object per line: ``time`` (ISO 8601, UTC), ``level``, ``logger``,
    ``message``, the :data:`FIELDS` a record carries, and ``exc`` with a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in FIELDS:
            if key in record.__dict__:
                out[key] = record.__dict__[key]
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


def configure(level: str = "info", json_lines: bool = False) -> None:
    """Sends the log to stderr at ``level`` (one of :data:`LEVELS`), as JSON lines if asked."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines() if json_lines else logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # websockets' INFO lines (connections opened and closed, HTTP answers) show at debug
    # only; never its DEBUG lines, which hold every frame (tokens and passwords in hello and
    # register). Nor aiosqlite's, every statement with its parameters (token and password
    # hashes): a log must never hold a secret, whatever its level.
    logging.getLogger("websockets").setLevel(logging.INFO if level == "debug"
                                             else logging.WARNING)
    logging.getLogger("aiosqlite").setLevel(logging.WARNING)
