"""python scripts/check.py [--quick] [pytest args]: set up .venv if needed, run the self-checks and the type
checker, then pytest."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
NODE_CLIENTS = ROOT / "tests" / "clients" / "package.json"   # the Node clients CLIENTS.md's snippets use
IN_VENV_FLAG = "BENCHWARMERS_CHECK_IN_VENV"
# pip names of the test extra -> the module each provides (the rest import under their own name).
IMPORT_NAMES = {"google-genai": "google.genai", "pyyaml": "yaml", "pytest-xdist": "xdist"}
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "build", "dist", "__pycache__", ".pytest_cache",
             ".mypy_cache"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".json", ".js", ".txt", ".cfg", ".ini", ".yaml", ".yml", ".sh", ".in", ""}
MODULE_WARN_LINES = 450
# Built in pieces so this file does not match its own check.
FORBIDDEN_REFS = (".." + "/shared", "/work" + "/shared", ".." + "\\shared")


HELP = """usage: python scripts/check.py [--quick] [PYTEST ARGS ...]

Check this checkout: make .venv with the test tools (the `test` extra of pyproject.toml) when it is missing
or incomplete, run the self-checks (the runtime imports with `python -S`, no references outside the project,
no runtime dependencies), check the package's types with mypy (its settings: [tool.mypy] in pyproject.toml;
`python -m mypy` runs it alone), install Debian's chromium for the browser tests where it can (as root, with
apt-get; BENCHWARMERS_NO_APT=1 skips that) and the Node clients of CLIENTS.md into .venv/node-clients where
npm is found (BENCHWARMERS_NO_NPM=1 skips that), then run pytest and print one summary line.

options:
  -h, --help   show this help and exit (nothing is installed or run)
  --quick      skip the slow tests (packaging, browsers)
  PYTEST ARGS  passed to pytest, e.g. tests/test_route.py -k failover. The tests run on several workers
               (pytest-xdist: 4, or one per core up to 8); -n 0 runs them all in one process. Python caches
               compiled modules for the run (__pycache__), even where PYTHONDONTWRITEBYTECODE is set

exit status: pytest's (0 when everything passed), 1 when a self-check or the type check failed, 2 on Python older
than 3.11."""


def say(text: str = "") -> None:
    print(text, flush=True)


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def test_extra() -> list[str]:
    import tomllib
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(data.get("project", {}).get("optional-dependencies", {}).get("test", []))


def module_name(requirement: str) -> str:
    name = re.split(r"[<>=!~\[; ]", requirement, 1)[0].strip()
    return IMPORT_NAMES.get(name, name.replace("-", "_"))


def missing_in(python: Path, requirements: list[str]) -> list[str]:
    """The requirements whose module the given interpreter cannot find (one quick subprocess)."""
    modules = {r: module_name(r) for r in requirements}
    probe = ("import importlib.util, sys\n"
             "def has(m):\n"
             "    try:\n        return importlib.util.find_spec(m) is not None\n"
             "    except ImportError:\n        return False\n"
             f"print(','.join(r for r, m in {modules!r}.items() if not has(m)))")
    out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True)
    if out.returncode != 0:
        return list(requirements)
    return [r for r in out.stdout.strip().split(",") if r]


def ensure_venv() -> Path:
    """Create .venv and install the test extra into it when something is missing; no pip call otherwise."""
    python = venv_python()
    if not python.exists():
        say(f"check: creating {VENV} ...")
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    requirements = test_extra()
    missing = missing_in(python, requirements)
    if missing:
        say(f"check: installing the test tools into .venv: {' '.join(missing)} ...")
        # The repo is used from source (pytest's pythonpath option): no editable install needed.
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements]
        if subprocess.run(pip).returncode != 0:
            raise SystemExit("check: pip could not install the test tools; see the messages above.")
    return python


def running_in_venv() -> bool:
    try:
        return Path(sys.prefix).resolve() == VENV.resolve()
    except OSError:
        return False


# ---- self-checks -------------------------------------------------------------------------------

def check_stdlib_imports() -> list[str]:
    """Import every module with `python -S` (no site-packages): the runtime is the standard library only."""
    walker = ("import importlib, pkgutil, sys, traceback\n"
              "import benchwarmers\n"
              "bad = 0\n"
              "names = ['benchwarmers'] + [m.name for m in pkgutil.walk_packages(benchwarmers.__path__, 'benchwarmers.')]\n"
              "for name in names:\n"
              "    try:\n        importlib.import_module(name)\n"
              "    except BaseException as e:\n"
              "        bad += 1\n"
              "        print(f'{name}: {type(e).__name__}: {e}')\n"
              "print(f'#imported {len(names) - bad} of {len(names)}')\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    out = subprocess.run([sys.executable, "-S", "-c", walker], cwd=ROOT, env=env, capture_output=True, text=True)
    lines = out.stdout.strip().splitlines()
    problems = [line for line in lines if not line.startswith("#")]
    if out.returncode != 0:
        problems.append(f"the import walk itself failed: {out.stderr.strip()[-500:]}")
    summary = next((line[1:] for line in lines if line.startswith("#")), "")
    say(f"check: stdlib-only imports: {summary or 'not run'}")
    return [f"import with python -S fails: {p}" for p in problems]


def project_files():
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if any(part in SKIP_DIRS or part.endswith(".egg-info") for part in rel.parts):
            continue
        if path.is_file() and path.suffix in TEXT_SUFFIXES:
            yield path, rel


def check_no_shared_refs() -> list[str]:
    problems = []
    for path, rel in project_files():
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for needle in FORBIDDEN_REFS:
            if needle in text:
                line = text[: text.index(needle)].count("\n") + 1
                problems.append(f"{rel}:{line}: refers to {needle!r}; the project must stand on its own")
    return problems


def check_no_runtime_deps() -> list[str]:
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
    deps = project.get("dependencies", [])
    if deps or "dependencies" in project.get("dynamic", []):
        return [f"pyproject.toml: runtime dependencies must be empty (standard library only), found {deps}"]
    return []


def warn_module_sizes() -> None:
    for path in sorted((ROOT / "benchwarmers").rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        lines = path.read_text(encoding="utf-8", errors="replace").count("\n")
        if lines > MODULE_WARN_LINES:
            say(f"check: warning: {path.relative_to(ROOT)} has {lines} lines (aim for under ~400)")


def check_types() -> list[str]:
    """mypy over the package, with pyproject.toml's [tool.mypy] (its cache in .mypy_cache keeps a re-run quick)."""
    out = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    lines = out.stdout.strip().splitlines()
    say(f"check: types (mypy): {lines[-1] if lines else out.stderr.strip()[-300:]}")
    if out.returncode == 0:
        return []
    return [line for line in lines[:-1] if ": error:" in line or ": note:" in line] or \
        [f"mypy failed (exit {out.returncode}): {out.stderr.strip()[-500:]}"]


def ensure_chromium() -> None:
    """Best effort: the dashboard tests drive Debian's chromium; install it when we may (root, apt-get)."""
    if (not sys.platform.startswith("linux") or os.environ.get("BENCHWARMERS_NO_APT") == "1"
            or shutil.which("chromium") or not shutil.which("apt-get") or os.geteuid() != 0):
        return
    say("check: installing Debian's chromium for the dashboard tests (BENCHWARMERS_NO_APT=1 skips this) ...")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
            if subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=900).returncode != 0:
                say(f"check: warning: `{' '.join(cmd)}` failed; browser tests will be skipped")
                return
    except (OSError, subprocess.TimeoutExpired) as e:
        say(f"check: warning: could not install chromium ({e}); browser tests will be skipped")


def ensure_node_clients() -> None:
    """Best effort: the Node clients of CLIENTS.md's snippets, into .venv/node-clients (their test skips without)."""
    npm = shutil.which("npm")
    if not npm or os.environ.get("BENCHWARMERS_NO_NPM") == "1":
        return
    target = VENV / "node-clients"
    wanted = json.loads(NODE_CLIENTS.read_text(encoding="utf-8"))
    have = target / "package.json"
    if have.exists() and json.loads(have.read_text(encoding="utf-8")) == wanted and \
            all((target / "node_modules" / name / "package.json").exists() for name in wanted["dependencies"]):
        return
    say("check: installing the Node clients for the CLIENTS.md tests (BENCHWARMERS_NO_NPM=1 skips this) ...")
    target.mkdir(parents=True, exist_ok=True)
    have.write_text(json.dumps(wanted, indent=2), encoding="utf-8")
    try:
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--silent"], cwd=target,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        if done.returncode != 0:
            say("check: warning: npm install failed; the Node snippets of CLIENTS.md will be skipped")
    except (OSError, subprocess.TimeoutExpired) as e:
        say(f"check: warning: could not install the Node clients ({e}); their snippets will be skipped")


# ---- pytest ----------------------------------------------------------------------------------

def workers() -> int:
    """pytest-xdist workers: most tests wait on sockets and subprocesses, not the CPU, so at least 4 even on 2 cores."""
    return min(8, max(4, os.cpu_count() or 1))


def parallel(extra: list[str]) -> list[str]:
    """Run on several workers unless the caller chose (-n, --numprocesses, -p no:xdist) or xdist is missing.

    Plain load distribution, a few tests at a time: the workers sort the slow tests first (tests/conftest.py), and
    small steps spread them over all workers instead of one worker's first batch. The groupings (loadgroup,
    loadscope, loadfile) are not used: they key tests by node id, and the fuzz tests share one id, so all but one
    of them would silently not run."""
    chose = any(a in ("-n", "--numprocesses", "no:xdist") or a.startswith(("-n", "--numprocesses="))
                for a in extra)
    if chose or importlib.util.find_spec("xdist") is None:
        return []
    return ["-n", str(workers()), "--maxschedchunk", "2"]


def run_pytest(args: list[str]) -> tuple[int, str]:
    """Run pytest, passing its output through as it comes; returns (exit code, its closing summary line)."""
    cmd = [sys.executable, "-m", "pytest", *args]
    # Compiled modules are cached for this run even where PYTHONDONTWRITEBYTECODE is set: the suite starts hundreds
    # of Python processes (and every worker collects the tests), each compiling the same sources again otherwise.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, env=env)
    tail = b""
    out = sys.stdout.buffer
    while True:
        chunk = proc.stdout.read1(65536) if hasattr(proc.stdout, "read1") else proc.stdout.read(4096)
        if not chunk:
            break
        out.write(chunk)
        out.flush()
        tail = (tail + chunk)[-8192:]
    code = proc.wait()
    summary = ""
    for line in reversed(tail.decode("utf-8", "replace").splitlines()):
        plain = re.sub(r"\x1b\[[0-9;]*m", "", line).strip(" =")
        if re.search(r"\b(passed|failed|error|errors|skipped|no tests ran)\b", plain):
            summary = plain
            break
    return code, summary


def counts(summary: str) -> dict:
    found = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|errors?|skipped|deselected)", summary)}
    return {"passed": found.get("passed", 0),
            "failed": found.get("failed", 0) + found.get("error", 0) + found.get("errors", 0),
            "skipped": found.get("skipped", 0)}


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        say(HELP)
        return 0
    if sys.version_info < (3, 11):
        say("check: Benchwarmers needs Python 3.11 or newer; run this with python3.11 or later.")
        return 2
    if not running_in_venv() and os.environ.get(IN_VENV_FLAG) != "1":
        python = ensure_venv()
        env = {**os.environ, IN_VENV_FLAG: "1"}
        return subprocess.run([str(python), str(Path(__file__).resolve()), *argv], env=env).returncode
    if running_in_venv():
        missing = missing_in(Path(sys.executable), test_extra())
        if missing:
            ensure_venv()
    quick = "--quick" in argv
    extra = [a for a in argv if a != "--quick"]
    started = time.monotonic()
    problems = check_stdlib_imports() + check_no_shared_refs() + check_no_runtime_deps()
    warn_module_sizes()
    problems += check_types()
    if problems:
        say("check: self-checks FAILED:")
        for p in problems:
            say(f"  {p}")
        say("check: 0 passed, 1 failed")
        return 1
    say("check: self-checks passed (stdlib-only imports, no outside references, no runtime dependencies, types)")
    ensure_chromium()
    ensure_node_clients()
    args = ["-q", *parallel(extra), *(["-m", "not slow"] if quick else []), *extra]
    say(f"check: python -m pytest {shlex.join(args)}")
    code, summary = run_pytest(args)
    seconds = time.monotonic() - started
    if code == 5:
        say("check: FAILED: pytest collected no tests (exit 5); a check that runs nothing proves nothing.")
        return 1
    c = counts(summary)
    verdict = "passed" if code == 0 else f"FAILED (pytest exit {code})"
    say(f"check: {verdict} in {seconds:.1f} s{' (quick: slow tests skipped)' if quick else ''}")
    say(f"check: {c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
