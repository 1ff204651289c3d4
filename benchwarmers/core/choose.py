"""Route mode's choice of member: by record with its uncertainty, so evidence wins and newcomers get turns."""
from __future__ import annotations

from dataclasses import dataclass

from .record import wilson_lower

WARMUP = 3      # a member with fewer judged turns than this is still being found out


@dataclass
class Ranked:
    alias: str
    score: tuple
    why: str


def rank(aliases: list[str], stats: dict[str, dict]) -> list[Ranked]:
    """Order members best first.

    A member with fewer than WARMUP judged asks comes first (fewest asks first), so every member gets its turns;
    after that the Wilson lower bound of the useful rate decides (one lucky verdict cannot outrank a long good
    record), then the failure rate, then the median seconds."""
    out = []
    for alias in aliases:
        s = stats.get(alias, {})
        judged, useful, asks = s.get("judged", 0), s.get("useful", 0), s.get("asks", 0)
        fail_rate = s.get("failures", 0) / asks if asks else 0.0
        speed = s.get("median_seconds") or 0.0
        if judged < WARMUP:
            score = (1, -asks, 0.0, -fail_rate, -speed)
            why = f"{alias}: {judged} judged asks (<{WARMUP}), {asks} asks so far: still being found out"
        else:
            lb = wilson_lower(useful, judged)
            score = (0, 0, lb, -fail_rate, -speed)
            why = (f"{alias}: useful {useful}/{judged} (Wilson lower bound {lb:.2f}), "
                   f"failures {fail_rate:.0%}, median {speed:.1f} s")
        out.append(Ranked(alias, score, why))
    out.sort(key=lambda r: r.score, reverse=True)
    return out
