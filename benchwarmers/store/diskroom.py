"""Free disk for the record's upkeep: what a compaction's batch (and a VACUUM) needs, and what the folders have."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

MARGIN = 16 * 2 ** 20   # bytes left free beyond the estimate: the service's own writes go on meanwhile


def mb(n: int) -> str:
    return f"{n / 2 ** 20:,.1f} MB"


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:   # not there (no WAL yet, or just emptied)
        return 0


def free_bytes(folder: Path) -> int:
    return shutil.disk_usage(folder).free


def batch_bytes(page: int, rows: int, chars: int, vacuum_pages: int) -> int:
    """The most one batch can add to the WAL: pruning rewrites its rows' pages, the pages they are put back in and
    their indexes' (a page a row, at worst, three times), and zeroes the pages their text filled (SQLite's
    secure_delete; up to 4 bytes a character); a vacuum batch moves its pages and updates their parents."""
    return max(3 * rows * page + 4 * chars, 2 * vacuum_pages * page)


def sqlite_temp_folder() -> Path:
    """Where SQLite writes its temporary files (VACUUM's copy of the record): on POSIX the first of SQLITE_TMPDIR,
    TMPDIR, /var/tmp, /usr/tmp and /tmp that is a folder this process may write in, as SQLite picks it, else the
    working folder; on Windows the user's temporary folder."""
    if os.name == "nt":
        return Path(tempfile.gettempdir())
    for name in (os.environ.get("SQLITE_TMPDIR"), os.environ.get("TMPDIR"), "/var/tmp", "/usr/tmp", "/tmp"):
        if name and os.path.isdir(name) and os.access(name, os.W_OK | os.X_OK):
            return Path(name)
    return Path.cwd()


def same_disk(a: Path, b: Path) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return True   # unknown: count both on the data folder's disk, the safer guess


def needed(folder: Path, batch: int, copy: int = 0) -> dict:
    """The room a compaction needs in `folder` (one batch's WAL and MARGIN) and, rewriting a record of `copy`
    bytes, the copy in SQLite's temporary folder and the WAL that holds the rewritten file until the checkpoint
    copies it back; beside what is free. `enough`: it may start."""
    free = free_bytes(folder)
    need, temp_need, temp_free, temp = batch + MARGIN, 0, None, None
    if copy:
        temp = sqlite_temp_folder()
        need += copy
        if same_disk(temp, folder):
            need += copy
        else:
            temp_need, temp_free = copy + MARGIN, free_bytes(temp)
    out: dict[str, int | bool | str | None] = {
        "needed_bytes": need, "free_bytes": free, "temp_needed_bytes": temp_need, "temp_free_bytes": temp_free,
        "enough": free >= need and (temp_free is None or temp_free >= temp_need)}
    if temp_need:
        out["temp_folder"] = str(temp)
    return out
