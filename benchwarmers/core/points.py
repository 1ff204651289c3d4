"""A panel's points: the claims its seats make, who asserts, denies or is silent, in order of how contested they are."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from ..words import plural

OFF, CONTESTED, ALL = "off", "contested", "all"
MODES = (OFF, CONTESTED, ALL)
HEADING = "## Where they disagree"
REVIEW = "review"          # the purpose whose lone claims (one seat's finding in code under review) are shown too


@dataclass(frozen=True)
class Point:
    """One checkable claim. Seat numbers as the panel numbers them; `quotes` holds, for every asserting or denying
    seat, its own words (found in its answer: the referee's word alone is never taken)."""
    id: str
    claim: str
    asserts: tuple[int, ...]
    denies: tuple[int, ...]
    silent: tuple[int, ...]
    quotes: dict = field(default_factory=dict)      # seat -> its words

    @property
    def contested(self) -> bool:
        """Some seat contradicts it."""
        return bool(self.denies)

    @property
    def lone(self) -> bool:
        """One seat makes it and nobody contradicts it."""
        return len(self.asserts) == 1 and not self.denies

    def stance(self, seat: int) -> str | None:
        return "assert" if seat in self.asserts else "deny" if seat in self.denies else None

    def to_dict(self) -> dict:
        """The point as the `bench` field and the API give it (JSON object keys are strings: the quotes' seats)."""
        return {"id": self.id, "claim": self.claim, "assert": list(self.asserts), "deny": list(self.denies),
                "silent": list(self.silent), "quotes": {str(s): q for s, q in sorted(self.quotes.items())}}


@dataclass
class Points:
    """What reading a referee's answer gave: its points, most contested first; or why there are none to show."""
    points: list = field(default_factory=list)
    unavailable: str | None = None                  # why nothing usable came back (no JSON, too big, a timeout...)
    dropped: list = field(default_factory=list)     # what of the referee's answer was refused, and why
    dropped_count: int = 0                          # all of it (`dropped` keeps the first few reasons)

    @classmethod
    def failed(cls, reason: str) -> "Points":
        """No points: the referee failed, timed out, or could not be asked (`reason` says which)."""
        return cls(unavailable=reason)

    def shown(self, mode: str, purpose: str = "") -> list[Point]:
        return select(self.points, mode, purpose)

    def bench(self, mode: str, purpose: str = "") -> dict:
        """The reply's `bench` fields: `points` (the shown ones) and `points_info` (how many, what was refused)."""
        shown = self.shown(mode, purpose)
        info = {"mode": mode, "found": len(self.points), "shown": len(shown), "dropped": self.dropped_count}
        if self.unavailable:
            info["unavailable"] = self.unavailable
        if self.dropped:
            info["dropped_reasons"] = list(self.dropped)
        return {"points": [p.to_dict() for p in shown], "points_info": info}


class Sided(Protocol):
    """What ranking reads of a point: who asserts it and who denies it (a Point, or one not yet named)."""
    @property
    def asserts(self) -> tuple[int, ...]: ...
    @property
    def denies(self) -> tuple[int, ...]: ...


S = TypeVar("S", bound=Sided)


def contest(point: Sided) -> tuple:
    """How contested a point is, as a sort key (smaller first): points some seat contradicts first, the most evenly
    split of them first (two against two before three against one), then more seats involved; then points that only
    deniers are left on; then a claim one seat alone makes; then claims several seats share, the fewer the sooner
    (wide agreement is the least worth a look)."""
    a, d = len(point.asserts), len(point.denies)
    if a and d:
        return 0, -min(a, d), -(a + d)
    if d:
        return 1, -d, 0
    return 2, a, 0


def ranked(points: list[S]) -> list[S]:
    """Most contested first; the referee's order among equals (a stable sort)."""
    return sorted(points, key=contest)


def select(points: list[Point], mode: str, purpose: str = "") -> list[Point]:
    """The points a reply shows: `all` of them; `contested`: those some seat contradicts, and those one seat alone
    makes when the collection's purpose is review (a lone finding is what a review panel is for); `off`: none."""
    if mode == ALL:
        return list(points)
    if mode == CONTESTED:
        return [p for p in points if p.contested or (purpose == REVIEW and p.lone)]
    return []


def seat_name(seat: int, models: dict) -> str:
    model = models.get(seat)
    return f"Seat {seat} · {model}" if model else f"Seat {seat}"


def _stance_line(label: str, seats: tuple, point: Point, models: dict) -> str:
    said = [f"{seat_name(s, models)}: \u201c{point.quotes[s]}\u201d" if s in point.quotes else seat_name(s, models)
            for s in seats]
    return f"- {label}: " + "; ".join(said)


def render_one(n: int, point: Point, models: dict) -> str:
    lines = [f"**{n}. {point.claim}** (point `{point.id}`)"]
    if point.asserts:
        lines.append(_stance_line("asserts", point.asserts, point, models))
    if point.denies:
        lines.append(_stance_line("denies", point.denies, point, models))
    if point.silent:
        lines.append("- silent: " + ", ".join(seat_name(s, models) for s in point.silent))
    return "\n".join(lines)


def render(found: Points, mode: str, purpose: str = "", models: dict | None = None) -> str:
    """The `## Where they disagree` block every format's reply carries after the seats (and streams last).
    `models`: seat number -> model alias, to name the seats as their own headings do."""
    models = models or {}
    if found.unavailable:
        return f"{HEADING}\n\npoints: unavailable, {found.unavailable}\n"
    shown = found.shown(mode, purpose)
    if shown:
        body = "\n\n".join(render_one(n, p, models) for n, p in enumerate(shown, 1))
    elif found.points:
        body = f"No seat contradicts another on the {plural(len(found.points), 'point')} the referee found."
    else:
        body = "The referee found no checkable point in the answers."
    return f"{HEADING}\n\n{body}\n"
