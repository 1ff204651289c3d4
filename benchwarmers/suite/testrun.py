"""A repository's own tests run on a planted bug, as mutation-testing tools do: in a copy of the repository (the
user's folder is never written), the tests must pass as they are, then a mutant that no test fails is dropped.
Each run has a time limit, and a stop kills the tests at once."""
from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .repofiles import SKIP_DIRS, is_test

DEFAULT_SECONDS = 120            # one run of the tests, at most (a repos.json entry's "test_seconds" changes it)
MAX_COPY_FILES, MAX_COPY_BYTES = 20_000, 300_000_000
OUTPUT_KEPT = 20_000             # characters of the tests' output kept to say which test failed
POLL = 0.1


class Stopped(Exception):
    """The job was stopped (the service is shutting down) or ran past its deadline."""


def has_tests(root: Path) -> bool:
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")]
        rel = Path(dirpath).relative_to(root).as_posix()
        if any(n.endswith(".py") and is_test(f"{rel}/{n}" if rel != "." else n) for n in filenames):
            return True
    return False


def interpreter(root: Path) -> str:
    """The repository's own virtual environment's Python when it has one, else the one running this."""
    for folder in (".venv", "venv", "env"):
        for rel in ("bin/python", "Scripts/python.exe"):
            if (root / folder / rel).is_file():
                return str(root / folder / rel)
    return sys.executable


def default_command(python: str) -> list[str]:
    """pytest when that Python has it, else unittest's discovery."""
    try:
        found = subprocess.run([python, "-c", "import pytest"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        found = False
    if found:
        return [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
    return [python, "-m", "unittest", "discover", "-q"]


class TestRun:
    """The copy and the command; `usable()` runs the tests once as they are, `kills(rel, text)` on a mutant."""

    def __init__(self, root: Path, command=None, seconds: float | None = None, stop: threading.Event | None = None,
                 deadline: float | None = None):
        self.root = Path(root).resolve()
        python = interpreter(self.root)
        if isinstance(command, str):
            command = shlex.split(command, posix=os.name != "nt")
        self.command = [python if c == "python" else c for c in command] if command else default_command(python)
        self.limit = float(seconds or DEFAULT_SECONDS)
        self.stop = stop or threading.Event()
        self.deadline = deadline
        self.copy: Path | None = None

    def words(self) -> str:
        return " ".join(shlex.quote(c) for c in self.command)

    def usable(self) -> str | None:
        """None when the tests pass on a copy of the repository as it is (then mutants can be judged by them),
        else why they cannot judge."""
        problem = self.make_copy()
        if problem:
            return problem
        started = time.monotonic()
        code, out = self.run()
        if code is None:
            return f"the tests did not finish within {self.limit:.0f} s"
        if code == 5 or "Ran 0 tests" in out or "no tests ran" in out:
            return "no test ran"
        if code:
            return f"the tests fail as the repository is (exit {code}): {last_line(out)}"
        # a mutant's run may take a few times as long as the clean one (it can loop), not the whole limit
        self.limit = min(self.limit, max(10.0, 3 * (time.monotonic() - started) + 5))
        return None

    def make_copy(self) -> str | None:
        count = size = 0
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
            count += len(filenames)
            size += sum(file_size(Path(dirpath) / n) for n in filenames)
            if count > MAX_COPY_FILES or size > MAX_COPY_BYTES:
                return f"the repository is over {MAX_COPY_FILES:,} files or {MAX_COPY_BYTES // 1_000_000:,} MB, " \
                       "too large to copy for its tests"
        self.copy = Path(tempfile.mkdtemp(prefix="bench-seed-")) / self.root.name
        try:
            shutil.copytree(self.root, self.copy, symlinks=True, ignore=shutil.ignore_patterns(*SKIP_DIRS))
        except (OSError, shutil.Error) as e:
            return f"the repository could not be copied for its tests ({e})"
        return None

    def kills(self, rel: str, mutant: str) -> tuple[bool, str]:
        """(True, which test failed) when the tests fail on the mutant (or run past the limit), else (False, ...)."""
        assert self.copy is not None     # prepare() made it
        target = self.copy / rel
        original = target.read_bytes()
        try:
            target.write_text(mutant, encoding="utf-8", newline="")
            code, out = self.run()
        finally:
            target.write_bytes(original)
        if code is None:
            return True, f"the tests ran past {self.limit:.0f} s on it (it loops or stalls)"
        if code:
            return True, failed_test(out) or f"the tests exit {code}"
        return False, "no test failed on it"

    def run(self) -> tuple[int | None, str]:
        """(exit code or None past the limit, output); Stopped when the job is stopped or past its deadline."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHWARMERS_")}   # our secrets stay ours
        assert self.copy is not None
        paths = [str(self.copy)] + ([str(self.copy / "src")] if (self.copy / "src").is_dir() else [])
        env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        with tempfile.TemporaryFile() as out:
            proc = subprocess.Popen(self.command, cwd=self.copy, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, **group())
            ends = time.monotonic() + self.limit
            try:
                while proc.poll() is None:
                    if self.stop.is_set() or (self.deadline is not None and time.monotonic() > self.deadline):
                        raise Stopped("stopped" if self.stop.is_set() else "past the deadline")
                    if time.monotonic() > ends:
                        return None, ""
                    self.stop.wait(POLL)
            finally:
                if proc.poll() is None:
                    end_group(proc)
            out.seek(0)
            text = out.read().decode("utf-8", "replace")[-OUTPUT_KEPT:]
        return proc.returncode, text

    def close(self) -> None:
        if self.copy is not None:
            shutil.rmtree(self.copy.parent, ignore_errors=True)


def group() -> dict:
    """Start the tests in their own process group, so a stop ends every process they started."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def end_group(proc: subprocess.Popen) -> None:
    try:
        if sys.platform == "win32":      # the whole tree: the tests' own child processes too
            subprocess.run(["taskkill", "/F", "/T", "/PID", str(proc.pid)], capture_output=True, timeout=10)
        else:
            os.killpg(proc.pid, signal.SIGKILL)
    except (OSError, subprocess.SubprocessError):
        pass
    if proc.poll() is None:
        proc.kill()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def file_size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except OSError:
        return 0


def failed_test(out: str) -> str | None:
    """The first failing test the output names (pytest's FAILED line, unittest's FAIL:/ERROR: line)."""
    for line in out.splitlines():
        line = line.strip()
        if line.startswith(("FAILED ", "ERROR ", "FAIL: ", "ERROR: ")):
            return line[:200]
    return None


def last_line(out: str) -> str:
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no output"
