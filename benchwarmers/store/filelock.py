"""A cross-process lock on a file: fcntl where it exists, msvcrt on Windows."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

try:
    import fcntl
except ImportError:          # Windows
    fcntl = None  # type: ignore[assignment]   # the module is None where it does not exist
    import msvcrt


class FileLock:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._thread_lock = threading.RLock()
        self._fd = None
        self._depth = 0

    def __enter__(self):
        self._thread_lock.acquire()
        if self._depth == 0:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            if fcntl:
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            else:
                while True:
                    try:
                        msvcrt.locking(self._fd, msvcrt.LK_NBLCK, 1)
                        break
                    except OSError:
                        time.sleep(0.01)
        self._depth += 1
        return self

    def __exit__(self, *exc):
        self._depth -= 1
        if self._depth == 0:
            try:
                if fcntl:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
                else:
                    os.lseek(self._fd, 0, 0)
                    msvcrt.locking(self._fd, msvcrt.LK_UNLCK, 1)
            finally:
                os.close(self._fd)
                self._fd = None
        self._thread_lock.release()
