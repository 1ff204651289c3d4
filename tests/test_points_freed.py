"""A panel shown with points is freed as soon as nothing holds it: its run and its refereeing refer to each other
only until the points are in, so a busy service does not pile up its panels (their asks, answers, seats) for the
cyclic collector's rare full passes. The service holds its newest asks on purpose (for their seats to be stopped
or retried, core/again.py); those alone stay."""
from __future__ import annotations

import gc
import weakref

from tests.helpers.panel import fake, setup_bench, wait_for  # noqa: F401  (the fake fixture)
from tests.test_points_wired import COLS, WAITS, ask, script

HOLDS = 2       # the asks the service holds for stop/retry, made few here so that a handful of panels outlast them


def test_a_panels_run_and_its_refereeing_are_freed_without_the_cyclic_collector(home, fake, make_service):
    setup_bench(home, fake, COLS)            # a referee outside the panel, contested points
    script(fake)
    svc = make_service()
    recent = svc.bench.panel.recent
    recent.most = HOLDS
    ask(svc.url, bench=WAITS)                # the first ask's one-off work (its caches, the referee's thread) done
    gc.collect()
    gc.disable()                             # nothing freed but by reference counts: a cycle would stay
    try:
        runs, judgings, panels = [], [], []
        for i in range(8):
            data = ask(svc.url, content=f"question {i}", bench=WAITS)   # the reply waits for its points
            assert [p["claim"] for p in data["bench"]["points"]] == ["The cache is stale."]
            panels.append(data["bench"]["panel"])
            run = recent.get(panels[-1])
            runs.append(weakref.ref(run))
            judgings.append(run.judging)
            del run
        # the runs the service no longer holds go once the threads that served them let go (at once, or nearly)
        wait_for(lambda: not any(r() is not None for r in runs[:-HOLDS]), timeout=10)
        assert all(r() is not None for r in runs[-HOLDS:])          # the newest, held for stop and retry
        assert all(j.done.is_set() and j.run is None for j in judgings)   # over: no way back to the run
        # what the refereeing says of where its points are read still names its panel
        assert [j.bench["points_info"]["url"] for j in judgings] == [f"/bench/panels/{p}/points" for p in panels]
    finally:
        gc.enable()


def test_a_refereeing_let_go_of_its_run_still_says_why_there_are_no_points(home, fake, make_service):
    # A referee's answer that comes back after its refereeing was ended (the service stopping records it as
    # cancelled first) is read with the run let go: why there are no points must not need the run.
    setup_bench(home, fake, COLS)
    script(fake)
    svc = make_service()
    data = ask(svc.url, bench=WAITS)
    j = svc.bench.panel.recent.get(data["bench"]["panel"]).judging
    assert j.run is None
    why = svc.bench.panel.referee._unavailable(j, "failed", "the referee's answer holds no JSON object")
    assert "(the referee was merger)" in why and "bench collection save core --referee MODEL" in why, why
