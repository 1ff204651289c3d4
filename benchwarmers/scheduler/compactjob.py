"""The daily compaction: the text older than record_keep_days pruned, free pages given back, statistics gathered
(PRAGMA optimize); no model is called."""
from __future__ import annotations

from ..store import compaction


def run(job) -> str:
    done = compaction.compact(job.db, job.settings()["record_keep_days"], now=job.clock.now())
    job.detail["compaction"] = [done]
    kept = f"text older than {done['keep_days']} days pruned" if done["keep_days"] else "all text kept"
    return (f"{kept}: {done['pruned_calls']:,} calls and {done['pruned_panels']:,} panels; "
            f"{done['freed_bytes'] / 2 ** 20:.1f} MB given back; the record is {done['store']['bytes'] / 2 ** 20:.1f} MB")
