"""The match's report card (contract section 17), made from the games' records alone: per
player and per seat (first, second) wins, draws, losses, points and the mean number of moves
of its games; for two players their Elo difference with its 95% interval (pentanomial, over
the pairs both of whose games were played) and, with ``--sprt``, the test's LLR and bounds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tablas.server.match import stats
from tablas.server.match.options import MatchOptions

SEATS = ("first", "second")


@dataclass
class Line:
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    moves: int = 0  # summed over its games

    def add(self, score: float | None, moves: int) -> None:
        self.games += 1
        self.moves += moves
        if score == 1:
            self.wins += 1
        elif score == 0:
            self.losses += 1
        else:
            self.draws += 1

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2

    def to_json(self) -> dict[str, Any]:
        return {"games": self.games, "wins": self.wins, "draws": self.draws,
                "losses": self.losses, "points": self.points,
                "mean_moves": round(self.moves / self.games, 2) if self.games else None}


@dataclass
class Card:
    name: str
    kind: str  # "engine" or "level"
    all: Line = field(default_factory=Line)
    seats: tuple[Line, Line] = field(default_factory=lambda: (Line(), Line()))
    reasons: dict[str, int] = field(default_factory=dict)  # its losses by forfeit, by reason


def score(record: dict[str, Any], seat: int) -> float:
    """What the game gave ``seat``: 1, ½ or 0."""
    winner = record["result"]["winner"]
    return 0.5 if winner is None else 1.0 if winner == seat else 0.0


def pentanomial(records: Sequence[dict[str, Any]], first: str) -> list[int]:
    """Pairs by ``first``'s half-points in them (0..4), over the complete pairs."""
    by_pair: dict[int, list[float]] = {}
    for r in records:
        by_pair.setdefault(r["pair"], []).append(score(r, r["seats"][first]))
    counts = [0] * 5
    for scores in by_pair.values():
        if len(scores) == 2:
            counts[round(2 * sum(scores))] += 1
    return counts


FORFEITS = ("illegal_move", "time_forfeit", "engine_died")


def card(opts: MatchOptions, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The report card as the JSON object ``--json`` prints."""
    cards = {p.name: Card(p.name, "engine" if p.argv is not None else "level")
             for p in opts.players}
    for r in records:
        for name, seat in r["seats"].items():
            s = score(r, seat)
            c = cards[name]
            c.all.add(s, len(r["moves"]))
            c.seats[seat].add(s, len(r["moves"]))
            if s == 0 and r["reason"] in FORFEITS:
                c.reasons[r["reason"]] = c.reasons.get(r["reason"], 0) + 1
    out: dict[str, Any] = {
        "game": opts.game, "seed": opts.seed, "games": len(records),
        "players": [{"name": c.name, "kind": c.kind, "all": c.all.to_json(),
                     **{SEATS[i]: c.seats[i].to_json() for i in (0, 1)},
                     "forfeits": c.reasons} for c in cards.values()],
        "elo": None, "sprt": None,
    }
    if len(opts.players) == 2:
        a, b = (p.name for p in opts.players)
        pairs = pentanomial(records, a)
        est = stats.pentanomial(pairs)
        out["pentanomial"] = pairs
        if est is not None:
            out["elo"] = {"player": a, "opponent": b, "score": round(est.score, 4),
                          "elo": _num(est.elo),
                          "low": _num(est.low), "high": _num(est.high),
                          "margin": _num(est.margin), "pairs": sum(pairs)}
        if opts.sprt is not None:
            t = opts.sprt
            lower, upper = stats.bounds(t.alpha, t.beta)
            value = stats.llr(pairs, t.elo0, t.elo1)
            out["sprt"] = {"elo0": t.elo0, "elo1": t.elo1, "alpha": t.alpha, "beta": t.beta,
                           "llr": round(value, 4), "lower": round(lower, 4),
                           "upper": round(upper, 4), "decision": decision(value, lower, upper)}
    return out


def decision(llr: float, lower: float, upper: float) -> str | None:
    return "H1" if llr >= upper else "H0" if llr <= lower else None


def _num(x: float) -> float | None:
    """A float for JSON: rounded, and null where infinite (a score of 0 or 1)."""
    return None if x != x or x in (float("inf"), float("-inf")) else round(x, 2)


def text(report: dict[str, Any]) -> str:
    """The card as a person reads it."""
    lines = [f"{report['game']}: {report['games']} games, seed {report['seed']}",
             f"{'player':<24} {'seat':<7} {'games':>5} {'W':>5} {'D':>5} {'L':>5} "
             f"{'points':>7} {'moves':>6}"]
    for p in report["players"]:
        for i, key in enumerate(("all", *SEATS)):
            row = p[key]
            mean = "-" if row["mean_moves"] is None else f"{row['mean_moves']:.1f}"
            lines.append(f"{p['name'] if i == 0 else '':<24} {key:<7} {row['games']:>5} "
                         f"{row['wins']:>5} {row['draws']:>5} {row['losses']:>5} "
                         f"{row['points']:>7g} {mean:>6}")
        if p["forfeits"]:
            lines.append(f"{'':<24} lost by forfeit: " + ", ".join(
                f"{n} {reason}" for reason, n in sorted(p["forfeits"].items())))
    e = report["elo"]
    if e is not None:
        shown = ("+inf" if e["score"] > 0.5 else "-inf") if e["elo"] is None \
            else f"{e['elo'] + 0.0:+.1f}"
        margin = "inf" if e["margin"] is None else f"{e['margin']:.1f}"
        low = ("+inf" if e["score"] == 1 else "-inf") if e["low"] is None \
            else f"{e['low']:+.1f}"
        high = ("-inf" if e["score"] == 0 else "+inf") if e["high"] is None \
            else f"{e['high']:+.1f}"
        lines.append(f"Elo {e['player']} - {e['opponent']}: {shown} +/- {margin} (95%: {low} "
                     f"to {high}; {e['pairs']} pairs, pentanomial {report['pentanomial']})")
    t = report["sprt"]
    if t is not None:
        said = {"H1": "H1 accepted", "H0": "H0 accepted", None: "undecided"}[t["decision"]]
        lines.append(f"SPRT [{t['elo0']:g}, {t['elo1']:g}] alpha {t['alpha']:g} beta "
                     f"{t['beta']:g}: LLR {t['llr']:.2f} (bounds {t['lower']:.2f}, "
                     f"{t['upper']:.2f}): {said}")
    return "\n".join(lines)
