"""The bench looks after itself: a scheduler thread runs the daily probe and the weekly speed test, paced."""
from .clock import Clock
from .jobs import JOBS, Job
from .ticker import Scheduler

__all__ = ["Clock", "JOBS", "Job", "Scheduler", "scheduler"]


def scheduler(ctx, clock: Clock | None = None) -> Scheduler:
    """The service's one scheduler (built on first use; the service starts its thread)."""
    return ctx.service("scheduler", lambda c: Scheduler(c, clock))
