"""The bench looks after itself: a scheduler thread runs the daily probe, catalog refresh and owed suite runs and
the weekly speed test, paced."""
from .clock import Clock
from .jobs import JOBS, Job
from .ticker import Scheduler

__all__ = ["Clock", "JOBS", "Job", "Scheduler"]
