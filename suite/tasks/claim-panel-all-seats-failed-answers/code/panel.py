class AllSeatsFailed(BenchError):
    status, code = 502, "all_seats_failed"


def whole(self, run: PanelRun) -> Answer:
    """The finished panel as one Answer; 502 when every seat failed."""
    for _ in self.finished(run):
        pass
    self._check_any(run)
    if run.ask.target.mode == MERGED:
        text = "".join(ev.text for ev in self._merge(run) if isinstance(ev, TextDelta))
    else:
        text = "".join(seat_block(s) for s in run.seats).rstrip() + "\n"
    return Answer(text=text, usage=self._usage(run), finish_reason=STOP)


def _check_any(self, run: PanelRun) -> None:
    if any(s.status == OK for s in run.seats):
        return
    lines = "; ".join(f"seat {s.seat} {s.model}: {s.status}: {s.error}" for s in run.seats)
    raise AllSeatsFailed(f"Every seat failed: {lines}.", "Check the endpoints with bench models; "
                         "the seats' call ids are in the record.")
