"""The bash the shell-snippet tests run: any on POSIX; on Windows only Git's (MSYS), not WSL's launcher."""
from __future__ import annotations

import functools
import os
import shutil
import subprocess


@functools.cache
def bash() -> str | None:
    """The path of a bash that runs here with this machine's files and loopback, or None. On Windows the `bash`
    on PATH may be WSL's, which runs in a Linux VM with paths and a network of its own: only an MSYS bash (Git
    for Windows ships one) qualifies, known by `uname -s`."""
    found = shutil.which("bash")
    if not found or os.name != "nt":
        return found
    try:
        uname = subprocess.run([found, "-c", "uname -s"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return found if uname.strip().upper().startswith(("MINGW", "MSYS", "CYGWIN")) else None


WHY = "needs bash and curl (on Windows, Git's bash: the bash of WSL does not share this machine's loopback)"
