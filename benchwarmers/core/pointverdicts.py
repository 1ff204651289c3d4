"""Judging a panel's points: a point's verdict becomes a claim for every seat that took a side (kept in the record
with it), withdrawn with it; and the useful / not-useful each seat's judged points propose."""
from __future__ import annotations

import time
from typing import Callable

from ..errors import NotFound
from ..store.pointstore import PointStore
from . import evidence
from .blind import Unnamed, names_pattern
from .points import Point

HINT = "Point ids come in each point's `id` field (bench.points, bench points PANEL, GET /bench/panels/{id}/points)."


def as_point(d: dict) -> Point:
    """A stored point (the `bench.points` shape) as a Point."""
    return Point(d["id"], d["claim"], tuple(d["assert"]), tuple(d["deny"]), tuple(d["silent"]),
                 {int(s): q for s, q in d["quotes"].items()})


NEVER_CAME = ("the referee's points never came: the service stopped before it answered (ask again, or with "
              "bench/<collection>:points to wait for them)")
LATE_PAST = 60.0        # a panel still pending this long past referee_timeout lost its referee (a stop, a crash)


class PointVerdicts:
    def __init__(self, store: PointStore, settings: Callable[[], dict] | None = None):
        self.store = store
        self.settings = settings or (lambda: {"referee_timeout": 120.0})

    def point(self, point_id: str) -> dict:
        found = self.store.get(point_id)
        if found is None:
            raise NotFound(f"No point {point_id!r}.", HINT)
        return found

    def judge(self, point_id: str, verdict: bool | None, note: str | None) -> dict:
        """Judge a point true, false or "can't tell" (None: recorded, and no claim for anyone); the claims of its
        verdict before are replaced. Gives the verdict, the claims written and the panel's proposals now."""
        point = self.point(point_id)
        claims = [c.to_dict() for c in evidence.claims(as_point(point), verdict)]
        written = self.store.judge(point_id, verdict, note, claims)
        return {**written, "panel": point["panel"], "proposals": self.proposals(point["panel"])}

    def withdraw(self, point_id: str) -> dict:
        point = self.point(point_id)
        had = self.store.withdraw(point_id)
        return {"point": point_id, "withdrawn": had, "panel": point["panel"],
                "proposals": self.proposals(point["panel"])}

    def of_panel(self, panel: str) -> dict | None:
        """A panel's points with their verdicts, what the referee call gave, and the proposals (None: no panel)."""
        found = self.store.for_panel(panel)
        if found is None:
            return None
        info = found["info"]
        if info and info.get("pending") and \
                time.time() - found["created"] > self.settings()["referee_timeout"] + LATE_PAST:
            info = {k: v for k, v in info.items() if k != "pending"} | {"unavailable": NEVER_CAME}
        d = {"panel": panel, "info": info, "points": found["points"],
             "proposals": self._proposed(panel, found["points"])}
        place = self.store.panel_of(panel)
        if place is not None and place["hidden"]:   # blind, not judged yet: no model named (nor passed over)
            return unseen_points(d, Unnamed(names_pattern(self.store.seat_names(panel))))
        return d

    def proposals(self, panel: str) -> list[dict]:
        found = self.store.for_panel(panel)
        return self._proposed(panel, found["points"]) if found else []

    def _proposed(self, panel: str, points: list[dict]) -> list[dict]:
        """Per seat that took a side on a judged point: useful when all its judged claims held, else not useful,
        with its call id, so that one confirmation (POST /bench/verdict with from_points) gives the verdict."""
        judged = [(as_point(p), p["verdict"]["true"]) for p in points if p["verdict"]]
        found = evidence.proposals(judged)
        if not found:
            return []
        seats = self.store.seats(panel)
        return [dict(found[s].to_dict(), **seats.get(s, {"call": None, "model": None})) for s in sorted(found)]


def unseen_points(d: dict, hidden: Unnamed) -> dict:
    """A blind panel's points (of_panel) as its asker reads them before it is judged: the claims and quotes with no
    model named, the referees passed over (a seat of the panel among them) as "a model"."""
    info = d["info"]
    if info and info.get("passed_over"):
        info = {**info, "passed_over": hidden.passed(info["passed_over"])}
    points = [dict(p, claim=hidden.text(p["claim"]), quotes={n: hidden.text(q) for n, q in p["quotes"].items()})
              for p in d["points"]]
    return {**d, "info": info, "points": points}
