"""The merge's call: the merge model streams one answer from every seat's; when it fails, every seat's block is
given instead, saying why. Recorded with the panel like a seat (kind merge)."""
from __future__ import annotations

import time
from typing import Iterator

from ..canonical import FAILED, MERGED, OK, SKIPPED, Collector, Seat, TextDelta, estimate_usage
from ..errors import BenchError, QuotaRefused
from ..roster.registry import Model
from ..store.ids import record_id
from .calling import Dialer
from .blind import panel_names
from .merge import merge_ask
from .panelrun import PanelRun
from .panelwords import seat_block
from .recorder import seat_ended


def stream(dialer: Dialer, run: PanelRun, model: Model | None, passed_over: list | tuple = ()) -> Iterator:
    """Stream the merge model's answer; on failure fall back to every seat's block, saying why. `passed_over`: the
    named merge models it could not be (a seat of the panel), with why."""
    call_id = record_id()
    info = run.merge_info = {"model": model.alias if model else None, "call": call_id, "status": OK}
    if passed_over:
        info["passed_over"] = list(passed_over)
    started = time.monotonic()
    collector, error, sent = Collector(), None, True
    if model is None:
        error = "no model could write the merge"
    else:
        ask = merge_ask(run.ask, run.seats, panel_names(run.seats, dialer.registry.models()))
        try:
            for ev in dialer.stream(model, ask, kind="merge", asker=run.asker, call=call_id):
                collector.add(ev)
                if isinstance(ev, TextDelta):
                    yield ev
        except QuotaRefused as e:
            error, sent = e.message, False
        except BenchError as e:
            error = str(e)
            dialer.failed(model, e)
    written = collector.result()
    if model is not None:
        estimate_usage(written, ask)
    usage = written.usage
    if error:
        info["status"], info["error"] = FAILED, error
        note = f"_The merge failed ({error}); here is every seat's answer instead._\n\n"
        blocks = "".join(seat_block(s, run.hidden) for s in run.seats)
        yield TextDelta(("\n\n" if written.text else "") + note + blocks)
    info["usage"] = usage.to_dict()
    info["cost"] = dialer.pricing.cost(model, written) if model is not None and sent else None
    run.merge_usage = usage
    if model is not None:
        merged = Seat(0, "merge", model.alias, call=call_id, status=info["status"] if sent else SKIPPED,
                      error=error, seconds=time.monotonic() - started)
        run.records.append(dialer.record(seat_ended(run, model, merged, written, counted=ask.prompt_tokens(),
                                                    mode=MERGED)))
