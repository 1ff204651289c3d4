"""The daily compaction: the text older than record_keep_days pruned, free pages given back, statistics gathered
(PRAGMA optimize), all in batches that keep the disk's use near the record's size; no model is called."""
from __future__ import annotations

from ..errors import BenchError
from ..store import compaction
from .jobrun import JobFailed


def run(job) -> str:
    try:
        done = compaction.compact(job.db, job.settings()["record_keep_days"], now=job.clock.now())
    except BenchError as e:   # too little free disk (said before anything changed), or a store that cannot write
        raise JobFailed(str(e)) from None
    job.detail["compaction"] = [done]
    kept = f"text older than {done['keep_days']} days pruned" if done["keep_days"] else "all text kept"
    notes = "".join(f"; {n}" for n in done["notes"])
    return (f"{kept}: {done['pruned_calls']:,} calls and {done['pruned_panels']:,} panels; "
            f"{done['freed_bytes'] / 2 ** 20:.1f} MB given back; the record is {done['store']['bytes'] / 2 ** 20:.1f} MB"
            f"{notes}")
