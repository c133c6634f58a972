"""The load generator (not shipped): a real server, thousands of real sockets, figures.

    python -m tools.load load [--games 500 --spectators 1000 --seconds 20 --sat-seconds 10]
    python -m tools.load load --baseline ../old-checkout      # side by side, in one run
    python -m tools.load burst [--rounds 3 --baseline ../old-checkout]  # rushes while games play
    python -m tools.load churn                                 # connections at full speed

Each job has its module: ``load`` (:mod:`.human`, the human-pace load and its search;
:mod:`.saturation`, against the server, an echo server and a frames-only one), ``load
--baseline`` (:mod:`.compare`), ``burst`` (:mod:`.burst`, its rushes in :mod:`.rush`),
``churn`` (:mod:`.churn`). Beneath them, :mod:`.measure` runs one measurement: a server child
(:mod:`.servers`, steered through :mod:`.child`), client processes (:mod:`.clients`) kept in
step by :mod:`.sync`. The command line is :mod:`.__main__`. docs/benchmarks.md has the figures
and the commands.
"""

from tools.load.burst import run_burst
from tools.load.churn import CHURN_MODES, run_churn
from tools.load.compare import run_compare
from tools.load.load import run_load
from tools.load.rush import Burst
from tools.load.wire import REFUSED_REQUEST, UPGRADE_REQUEST

__all__ = ["CHURN_MODES", "REFUSED_REQUEST", "UPGRADE_REQUEST", "Burst", "run_burst",
           "run_churn", "run_compare", "run_load"]
