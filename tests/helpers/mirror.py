"""A forge's raw files, made here: small git repositories with one bug fix each (written for these tests), their
picks, and a folder laid out as OWNER/NAME/COMMIT/PATH served on 127.0.0.1 (port 0) as GitHub serves raw files."""
from __future__ import annotations

import json
import subprocess
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from benchwarmers.suite import history
from tests.fakes.server import shut_down
from tests.helpers.gitrepo import MIT, commit, fix_repo

WINDOW = '''"""Sliding windows over a list."""


def windows(items, size):
    """Every run of `size` neighbours, in order."""
    out = []
    for start in range(len(items) - size):
        out.append(items[start:start + size])
    return out
'''


def gadgets_repo(tmp_path: Path) -> tuple[Path, str]:
    """A second repository, whose one fix is an off-by-one in a range."""
    repo = tmp_path / "gadgets"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, capture_output=True)
    commit(repo, "First version", {"LICENSE": MIT, "gadgets/windows.py": WINDOW}, 1_600_000_000)
    fixed = WINDOW.replace("range(len(items) - size)", "range(len(items) - size + 1)")
    sha = commit(repo, "Fix windows missing the last run (fixes #3)", {"gadgets/windows.py": fixed}, 1_600_000_100)
    return repo, sha


def made_picks(tmp_path: Path) -> tuple[list[dict], dict]:
    """Two picks, one of each repository made here (with their areas), and {OWNER/NAME: clone}."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    widgets, shas = fix_repo(tmp_path)
    gadgets, fix = gadgets_repo(tmp_path)
    picks = [history.pick_of(history.from_commit(widgets, "example/widgets", shas["fix"]), area="numerics"),
             history.pick_of(history.from_commit(gadgets, "example/gadgets", fix), area="data structures")]
    return picks, {"example/widgets": widgets, "example/gadgets": gadgets}


def write_picks(path: Path, picks: list[dict]) -> Path:
    path.write_text(json.dumps({"picks": picks}, indent=2), encoding="utf-8")
    return path


def raw_files(folder: Path, picks: list[dict], clones: dict) -> Path:
    """Each pick's two file versions under folder/OWNER/NAME/COMMIT/PATH, as a forge serves them."""
    for p in picks:
        for sha in (p["base_commit"], p["commit"]):
            data = subprocess.run(["git", "-C", str(clones[p["repo"]]), "show", f"{sha}:{p['path']}"],
                                  check=True, capture_output=True).stdout
            target = folder.joinpath(*p["repo"].split("/"), sha, *p["path"].split("/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return folder


class Mirror:
    """The folder served over HTTP on loopback; `hold` (an Event) keeps every request waiting until it is set."""

    def __init__(self, folder: Path):
        self.asked: list[str] = []
        self.hold = threading.Event()
        self.hold.set()
        mirror = self

        class Handler(SimpleHTTPRequestHandler):
            def do_GET(self):
                mirror.asked.append(self.path)
                mirror.hold.wait(60)
                super().do_GET()

            def log_message(self, *args):
                pass
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(folder)))
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "Mirror":
        return self

    def __exit__(self, *exc) -> None:
        self.hold.set()
        shut_down(self.server)
        self.server.server_close()
