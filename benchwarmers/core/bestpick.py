"""The best answer of a panel in one judgement: the chosen seat beat each other seat that answered (or none was any
good), withdrawn in one; and the useful / not-useful a pick proposes for each seat's verdict form."""
from __future__ import annotations

from ..errors import BadRequest
from ..store.bestpicks import BestPicks


class Best:
    def __init__(self, store: BestPicks):
        self.store = store

    def pick(self, panel: str, seat: int | None) -> dict:
        """Pick `seat` as the panel's best answer (None: every answer was bad); the pick before is replaced."""
        seats = self.store.seats(panel)
        if seat is not None and seat not in {s["seat"] for s in seats}:
            answered = ", ".join(str(s["seat"]) for s in seats) or "none"
            raise BadRequest(f"Seat {seat} of panel {panel!r} has no answer to pick (seats that answered: "
                             f"{answered}).", "Pick a seat that answered, or null when every answer was bad.")
        return {**self.store.pick(panel, seat), "proposals": self.proposals(panel),
                "seats": self.seating(panel)["seats"]}

    def seating(self, panel: str) -> dict:
        """Who sat where ({blind, revealed, seats: [{seat, call, model}]}), for GET /bench/panels/{id}: a blind
        panel not judged yet names each seat's model as "Seat N"; once judged (a best pick, a verdict or a point's
        verdict), its models."""
        state = self.store.state(panel) or {"blind": False, "revealed": None}
        hidden = state["blind"] and state["revealed"] is None
        seats = [dict(s, model=f"Seat {s['seat']}") if hidden else s for s in self.store.seated(panel)]
        return {**state, "seats": seats}

    def withdraw(self, panel: str) -> dict:
        return {"panel": panel, "withdrawn": self.store.withdraw(panel), "proposals": []}

    def of_panel(self, panel: str) -> dict:
        return {"panel": panel, "best": self.store.current(panel), "proposals": self.proposals(panel)}

    def proposals(self, panel: str) -> list[dict]:
        """What the pick proposes, as a point verdict's proposals are shaped: the best seat useful; with no answer
        any good, every seat that answered not useful; a seat passed over gets none (second best is not bad)."""
        best = self.store.current(panel)
        if best is None:
            return []
        out = []
        for s in self.store.seats(panel):
            if best["seat"] is None:
                out.append({**s, "useful": False, "why": "the best pick says no answer was any good"})
            elif s["seat"] == best["seat"]:
                out.append({**s, "useful": True, "why": "picked as the best answer"})
        return out


def check_seat(body) -> int | None:
    """The seat of a pick's body ({"seat": N} or {"seat": null}), or a 400 saying what to send."""
    if not isinstance(body, dict) or set(body) != {"seat"}:
        raise BadRequest('The body must be {"seat": N} (the best answer\'s seat) or {"seat": null} (none was good).')
    seat = body["seat"]
    if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 1 <= seat <= 1000):
        raise BadRequest("`seat` must be a seat number (1, 2, ...) or null.")
    return seat
