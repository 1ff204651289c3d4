"""The rebench builder on a small fixture (tests/fixtures/rebench, made up for this test): rows in, tasks out,
with the buggy file, the lines the fix touched and the fixed file as the control; the data set itself is
downloaded only when a user runs suite/rebench.py."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from benchwarmers.suite import rebench
from benchwarmers.suite.tasks import load, load_all
from tests.fakes.server import shut_down

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "rebench"
SCRIPT = ROOT / "suite" / "rebench.py"
LICENCES = {"example/widgets": "MIT"}


class Hub:
    """One loopback server standing in for the three hosts the builder reads: the datasets-server /rows API,
    raw files at a commit, and the repository licence API."""

    def __init__(self):
        hub = self
        self.asked: list[str] = []
        self.cut: dict[str, bool] = {}     # instance id -> its patch comes cut short in a page (True: even alone)
        self.limited = False               # the licence API answers as GitHub does past its rate limit

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                hub.asked.append(self.path)
                status, body = hub.answer(urlsplit(self.path))
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, url) -> tuple[int, bytes]:
        if url.path == "/rows":
            q = parse_qs(url.query)
            rows = [json.loads(line) for line in (FIXTURE / "rows.jsonl").read_text().splitlines()]
            start, length = int(q["offset"][0]), int(q["length"][0])
            return 200, json.dumps({"rows": [self.item(i, r, length) for i, r in
                                             enumerate(rows[start:start + length], start)]}).encode()
        if url.path.startswith("/repos/") and self.limited:
            return 403, b'{"message": "API rate limit exceeded for 127.0.0.1.", "documentation_url": "x"}'
        if url.path.startswith("/repos/") and url.path.endswith("/license"):
            repo = url.path[len("/repos/"):-len("/license")]
            if repo in LICENCES:
                return 200, json.dumps({"license": {"spdx_id": LICENCES[repo]}}).encode()
            return 404, b'{"message": "Not Found"}'
        path = FIXTURE / "files" / url.path.lstrip("/")
        return (200, path.read_bytes()) if path.is_file() else (404, b"404: Not Found")

    def item(self, index: int, row: dict, length: int) -> dict:
        """A /rows item; a cell is cut to 100 bytes and named in truncated_cells, as datasets-server does when a
        page would be too big."""
        always = self.cut.get(row["instance_id"])
        if always is None or (length == 1 and not always):
            return {"row_idx": index, "row": row, "truncated_cells": []}
        return {"row_idx": index, "row": {**row, "patch": row["patch"][:100]}, "truncated_cells": ["patch"]}

    def stop(self):
        shut_down(self.server)
        self.server.server_close()


@pytest.fixture
def hub():
    h = Hub()
    yield h
    h.stop()


def rows() -> list[dict]:
    return [json.loads(line) for line in (FIXTURE / "rows.jsonl").read_text().splitlines()]


def test_a_row_becomes_a_bug_task_with_its_fixed_file_as_control(hub):
    task = rebench.build(rows()[0], hub.url, hub.url)
    path = "src/widgets/core.py"
    assert task.id == "rebench-example__widgets-42" and list(task.files) == [path]     # the test file is left out
    before = (FIXTURE / "files/example/widgets" / rows()[0]["base_commit"] / path).read_text()
    assert task.files[path] == before
    assert task.control[path] == before.replace("    if value > high:\n        return low",
                                                "    if value > high:\n        return high")
    assert task.answer == {"lines": {path: [[8, 8]]}}
    assert task.files[path].splitlines()[7].strip() == "return low"
    assert task.source | {"excerpt": None} == {
        "kind": "rebench", "dataset": "nebius/SWE-rebench-V2", "instance_id": "example__widgets-42",
        "repo": "example/widgets", "url": "https://github.com/example/widgets",
        "base_commit": rows()[0]["base_commit"], "created_at": "2025-07-01T10:00:00", "language": "python",
        "license": "MIT", "excerpt": None}
    assert rebench.notice_lines([task]) == [
        "- suite/tasks/rebench-example__widgets-42: code from https://github.com/example/widgets at commit "
        f"{rows()[0]['base_commit']} (SWE-rebench-V2 instance example__widgets-42), licensed MIT."]


@pytest.mark.parametrize("index, words", [
    (1, "names no licence"), (2, "does not fit the file"), (3, "changes no existing source file")])
def test_rows_that_cannot_become_tasks_say_why(hub, index, words):
    with pytest.raises(rebench.RowSkipped, match=words):
        rebench.build(rows()[index], hub.url, hub.url)


def test_a_large_file_is_cut_to_the_fix_with_context():
    before = "".join(f"line {n}\n" for n in range(1, 1001))
    patch = ("diff --git a/big.py b/big.py\n--- a/big.py\n+++ b/big.py\n@@ -499,3 +499,4 @@\n line 499\n-line 500\n"
             "+line 500 fixed\n+line 500 guard\n line 501\n")
    fp, = rebench.parse_patch(patch)
    after = rebench.apply(before, fp)
    old, new, key, lines = rebench.window(before, after, fp, rebench.touched(fp))
    assert lines == [459, 542] and key == [[42, 42]]
    assert old.splitlines()[41] == "line 500" and new.splitlines()[41:43] == ["line 500 fixed", "line 500 guard"]
    assert new.splitlines()[-1] == "line 542" and old.splitlines()[-1] == "line 542"


def test_an_insertion_is_pointed_at_by_the_lines_around_it():
    fp, = rebench.parse_patch("diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -2,2 +2,3 @@\n b\n+guard\n c\n")
    assert rebench.touched(fp) == [[2, 3]]
    assert rebench.apply("a\nb\nc\n", fp) == "a\nb\nguard\nc\n"


def test_the_script_builds_from_the_rows_api_and_skips_what_it_cannot_use(hub, tmp_path):
    out = tmp_path / "tasks"
    run = subprocess.run([sys.executable, str(SCRIPT), "--hf-base", hub.url, "--files-base", hub.url,
                          "--api-base", hub.url, "--out", str(out), "--language", "python", "--since", "2025-07-01",
                          "--notice", str(tmp_path / "NOTICE")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "rebench-example__widgets-42: example/widgets (MIT)"
    assert "skipped example__nolicence-7" in run.stderr and "skipped example__widgets-43" in run.stderr
    assert "example__gadgets-9" not in run.stderr + run.stdout                    # not python: not even tried
    assert any(a.startswith("/rows?dataset=nebius%2FSWE-rebench-V2") for a in hub.asked)
    task = load(out / "rebench-example__widgets-42")
    assert task.kind == "bug" and task.control and task.answer["lines"]
    assert not (tmp_path / "NOTICE").exists()                                     # only the shipped set is listed
    again = subprocess.run([sys.executable, str(SCRIPT), "--rows", str(FIXTURE / "rows.jsonl"), "--files-base",
                            hub.url, "--api-base", hub.url, "--out", str(out)], capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0 and "already exists" in again.stderr             # never overwritten


def test_the_script_says_so_when_the_rows_cannot_be_read(tmp_path):
    run = subprocess.run([sys.executable, str(SCRIPT), "--hf-base", "http://127.0.0.1:9", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "Could not read the rows" in run.stderr


def test_every_shipped_rebench_task_names_its_source_and_licence_in_notice():
    shipped = [t for t in load_all(None)[0].values() if t.source.get("kind") == "rebench"]
    notice = (ROOT / "NOTICE").read_text(encoding="utf-8")
    assert notice_section(notice) == rebench.notice_lines(shipped)                 # no task left out, none stale
    assert shipped or "None are shipped in this release" in notice


def test_a_patch_the_rows_api_cut_short_is_asked_for_again_alone(hub):
    hub.cut["example__widgets-42"] = False
    got = rebench.hf_rows(base=hub.url)
    assert got[0] == rows()[0] and "truncated_cells" not in got[0]
    assert any("offset=0&length=1" in a for a in hub.asked)
    assert rebench.build(got[0], hub.url, hub.url).answer["lines"]


def test_a_patch_still_cut_short_alone_skips_its_row_with_that_reason(hub):
    hub.cut["example__widgets-42"] = True
    got = rebench.hf_rows(base=hub.url)
    assert got[0]["truncated_cells"] == ["patch"] and len(got[0]["patch"]) == 100
    with pytest.raises(rebench.RowSkipped, match="sent its patch cut short"):
        rebench.build(got[0], hub.url, hub.url)
    assert [r.get("truncated_cells") for r in got[1:]] == [None] * (len(rows()) - 1)


def test_a_licence_api_refusal_is_not_a_missing_licence(hub):
    hub.limited = True
    with pytest.raises(rebench.RowSkipped, match="answered 403 for example/widgets .API rate limit exceeded") as e:
        rebench.build(rows()[0], hub.url, hub.url)
    assert "names no licence" not in str(e.value)
    with pytest.raises(rebench.RowSkipped, match="could not be read for example/widgets"):
        rebench.licence("example/widgets", "http://127.0.0.1:9")
    hub.limited = False
    assert rebench.licence("example/nolicence", hub.url) is None                  # a 404: it names none


def load_script():
    spec = importlib.util.spec_from_file_location("rebench_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def notice_section(text: str) -> list[str]:
    """The lines suite/rebench.py keeps between its NOTICE markers."""
    script = load_script()
    return text.split(script.NOTICE_START, 1)[1].split(script.NOTICE_END, 1)[0].strip("\n").splitlines()


def test_update_notice_keeps_the_generated_section_equal_to_the_tasks(hub, tmp_path):
    script = load_script()
    task = rebench.build(rows()[0], hub.url, hub.url)
    original = (ROOT / "NOTICE").read_text(encoding="utf-8")
    notice = tmp_path / "NOTICE"
    notice.write_text(original, encoding="utf-8")
    assert notice_section(original) != rebench.notice_lines([task])               # the check below can fail
    script.update_notice(notice, rebench.notice_lines([task]))
    text = notice.read_text(encoding="utf-8")
    assert notice_section(text) == rebench.notice_lines([task])
    assert text.split(script.NOTICE_START)[0] == original.split(script.NOTICE_START)[0]   # the rest is kept
    script.update_notice(notice, notice_section(original))
    assert notice.read_text(encoding="utf-8") == original
    bare = tmp_path / "BARE"
    script.update_notice(bare, rebench.notice_lines([task]))                      # no section yet: one is added
    assert notice_section(bare.read_text(encoding="utf-8")) == rebench.notice_lines([task])
