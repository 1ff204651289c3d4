"""The referee's call after a panel's seats: which points a reply shows (off, contested, all), the model that reads
the answers, the call itself (limits, ledger kind `referee`, `referee_timeout`), and what is kept of it."""
from __future__ import annotations

import logging
import time
from typing import Callable, Iterator

from ..canonical import FAILED, OK, ROUTE, SKIPPED, TIMEOUT, Answer, TextDelta, Usage
from ..errors import BenchError, FaultKind, QuotaRefused, UpstreamFailed
from ..providers import Timeouts
from ..roster.registry import Registry
from ..store.ids import record_id
from ..store.pointstore import PointStore
from . import merge, points, referee
from .calling import Dialer
from .points import Points
from .rankings import Rankings
from .recorder import Ended

log = logging.getLogger("benchwarmers.referee")
KIND = "referee"
MAX_TOKENS = 4096      # the referee's answer: two dozen points with their quotes fit well within it


def points_mode(run) -> str:
    """What the reply shows: the request's word (`bench.points`, or `:points` for all of them), else the collection's
    (`--points`; a collection that never said is off), never anything for route mode's turns."""
    ask = run.ask
    if ask.target.mode == ROUTE:
        return points.OFF
    if ask.points in points.MODES:
        return ask.points
    if ask.target.points:
        return points.ALL
    return run.collection.points if run.collection else points.OFF


class Refereeing:
    """Asks the referee for a finished panel's points, records the call with the panel and keeps the points."""

    def __init__(self, registry: Registry, caller: Dialer, record: Rankings, settings: Callable[[], dict],
                 store: PointStore):
        self.registry, self.caller, self.record, self.settings = registry, caller, record, settings
        self.store = store

    def model(self, run):
        """The collection's referee, else the referee_model setting, else as the merge model is chosen."""
        models = self.registry.models()
        for name in ((run.collection.referee if run.collection else None), self.settings()["referee_model"]):
            if name and name in models and models[name].active:
                return models[name]
        return merge.choose(run.collection, self.settings()["merge_model"], self.registry, self.record, run.reply())

    def events(self, run) -> Iterator:
        """The `## Where they disagree` block as one event, once the referee has answered (nothing when off)."""
        block = self.block(run)
        if block:
            yield TextDelta(block)

    def block(self, run) -> str:
        """Referee the panel (once) and give its block, to go after the seats: "" when the reply shows no points."""
        mode = points_mode(run)
        if mode == points.OFF:
            return ""
        if run.points_text is None:
            run.points_text = self._referee(run, mode)
        return run.points_text

    def _referee(self, run, mode: str) -> str:
        purpose = run.collection.purpose if run.collection else ""
        info = {"mode": mode}
        if len(referee.answered(run.seats)) < 2:
            found = Points.failed("fewer than two seats answered, so there is nothing to compare")
        else:
            model = self.model(run)
            if model is None:
                found = Points.failed("no model on the bench could referee")
            else:
                found = self._call(run, model, info)
        bench = found.bench(mode, purpose)
        bench["points_info"].update(info)
        run.points = bench
        shown = {p.id for p in found.shown(mode, purpose)}
        run.records.append(self.store.save(run.id, bench["points_info"],
                                           [dict(p.to_dict(), shown=p.id in shown) for p in found.points]))
        names = {s.seat: s.model for s in run.seats}
        return "\n\n" + points.render(found, mode, purpose, names)

    def _call(self, run, model, info: dict) -> Points:
        """The referee's call, recorded with the panel (seat none, kind referee); its answer read strictly."""
        ask = referee.referee_ask(run.ask, run.seats, MAX_TOKENS)
        call_id = record_id()
        info.update(referee=model.alias, call=call_id)
        seconds = self.settings()["referee_timeout"]
        started = time.monotonic()
        answer, status, error, sent = None, OK, None, True
        try:
            answer = self.caller.complete(model, ask, kind=KIND, asker=run.asker, timeouts=Timeouts(
                connect=min(10.0, seconds), first_byte=seconds, idle=seconds))
        except QuotaRefused as e:
            status, error, sent = SKIPPED, e.message, False
        except UpstreamFailed as e:
            timed_out = e.kind is FaultKind.TIMEOUT
            status = TIMEOUT if timed_out else FAILED
            error = f"the referee {model.alias} gave no answer within {seconds:g} s" if timed_out else str(e)
            self.caller.failed(model, e)
        except BenchError as e:
            status, error = FAILED, str(e)
        except Exception as e:   # a bug of ours costs the points, never the panel's answers
            log.exception("the referee %s failed", model.alias)
            status, error = FAILED, f"internal error: {type(e).__name__}"
        took = time.monotonic() - started
        info["seconds"] = round(took, 3)
        if answer is not None:
            run.referee_usage = answer.usage
        info["usage"] = (answer.usage if answer is not None else Usage()).to_dict()
        run.records.append(self.caller.record(Ended(
            call_id, model, run.ask, status if sent else SKIPPED, KIND, run.ask.target.mode, took, answer, error,
            collection=run.collection_name, panel=run.id, request=run.seat_request, counted=ask.prompt_tokens(),
            sent=sent, asker=run.asker)))
        if error:
            return Points.failed(error.rstrip("."))
        return referee.read((answer or Answer("")).text, run.seats, ids=lambda k: record_id("pt_"))
