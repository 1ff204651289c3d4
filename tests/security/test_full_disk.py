"""A full disk (filled by big asks, a log, anything): an ask answered while the record store cannot write says its
record was not kept, in every client format, whole and streamed, panel and route turn, and names no call id the
record does not hold; a compaction on a disk without room is refused with how much it needs and how much is free.
Simulated (the database capped at its size), and on a real full disk: a small tmpfs, on Linux as root."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from urllib.parse import urlencode

import pytest

from benchwarmers import home as home_mod
from benchwarmers.cli.main import main
from benchwarmers.store.ids import record_id
from tests.fakes import FakeAnthropic, FakeOpenAI
from tests.helpers.compat import panel  # noqa: F401 (a fixture)
from tests.helpers.dashboard import Session
from tests.helpers.data import configure
from tests.helpers.http import Http
from tests.test_formats_http import FORMATS, PROMPT, STREAMING, body_for, call, path_for
from tests.test_mcp_http import ACCEPT, open_session, rpc
from tests.test_store_faults import fill, free

# A record id made today: an optional prefix, 8 base-62 digits of time (the first 3 change every 10 days), then 12
# random URL-safe characters (store/ids.py).
RECORD_ID = re.compile(r"(?<![A-Za-z0-9_-])(?:p_|pt_)?" + re.escape(record_id()[:3])
                       + r"[0-9A-Za-z]{5}[A-Za-z0-9_-]{12}(?![A-Za-z0-9_-])")
CASES = [(f, False) for f in FORMATS] + [(f, True) for f in sorted(STREAMING | {"gemini"})]
ROUTE = {"model": "bench/core:route", "max_tokens": 20, "messages": [{"role": "user", "content": "x" * 5000}]}


def big_body(fmt: str, stream: bool) -> dict:
    """The format's ask with a prompt long enough that its panel's row needs a new page of the database."""
    return json.loads(json.dumps(body_for(fmt, stream=stream)).replace(PROMPT, "x" * 5000))


def benches(raw: bytes) -> list[dict]:
    """Every `bench` object in a reply: its JSON, or each JSON piece of its stream (SSE or NDJSON)."""
    found = []

    def walk(value):
        if isinstance(value, dict):
            if isinstance(value.get("bench"), dict):
                found.append(value["bench"])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
    for piece in raw.decode("utf-8", "replace").replace("data:", "\n").splitlines():
        piece = piece.strip()
        if piece.startswith("{"):
            try:
                walk(json.loads(piece))
            except ValueError:
                continue
    return found


def record_ids(raw: bytes, headers: dict) -> set[str]:
    """Whatever in a reply has the shape of a record id, its headers' values included."""
    text = raw.decode("utf-8", "replace") + "\n" + "\n".join(str(v) for v in headers.values())
    return set(RECORD_ID.findall(text))


def assert_not_kept(raw: bytes, headers: dict, note: bool = True) -> None:
    found = benches(raw)
    assert found, raw[:400]
    last = found[-1]
    assert last["record"]["kept"] is False and "cannot write" in last["record"]["why"], last
    assert not record_ids(raw, headers), (record_ids(raw, headers), raw[:400])
    if note:
        assert "Not recorded" in raw.decode(), raw[-600:]


@pytest.mark.parametrize("fmt, stream", CASES, ids=[f"{f}-{'stream' if s else 'whole'}" for f, s in CASES])
def test_a_panel_answered_while_the_store_cannot_write_says_so_and_names_no_call(panel, fmt, stream):  # noqa: F811
    db = panel.service.bench.db
    status, headers, raw = call(panel.url, "POST", path_for(fmt, stream=stream), body_for(fmt, stream=stream))
    assert status == 200
    seats = {s["call"] for s in benches(raw)[-1]["seats"]}
    assert seats and seats <= record_ids(raw, headers)        # the scan sees the ids a kept reply names
    fill(db)
    try:
        status, headers, raw = call(panel.url, "POST", path_for(fmt, stream=stream), big_body(fmt, stream))
        assert status == 200
        if stream:   # its headers went out before the seats answered: its last event says the record was not kept
            headers = {k: v for k, v in headers.items() if k.lower() != "x-bench-panel"}
        else:
            assert headers.get("x-bench-record") == "not kept" and "x-bench-panel" not in headers
        assert_not_kept(raw, headers)
    finally:
        free(db)
    status, headers, raw = call(panel.url, "POST", path_for(fmt, stream=stream), body_for(fmt, stream=stream))
    assert status == 200 and "record" not in benches(raw)[-1] and "Not recorded" not in raw.decode()


@pytest.mark.parametrize("path, stream", [("/v1/messages", False), ("/v1/messages", True),
                                          ("/v1/chat/completions", False), ("/v1/chat/completions", True)])
def test_a_route_turn_answered_while_the_store_cannot_write_says_so_and_names_no_call(home, make_service, path,
                                                                                        stream):
    with FakeOpenAI() as oa, FakeAnthropic() as an:
        configure(home, {"oa": (oa, "openai"), "an": (an, "anthropic")},
                  {"a": ("oa", "m-a", {"tools": True}), "b": ("an", "m-b", {"tools": True})},
                  {"core": {"members": ["a", "b"], "explore": 0}})
        svc = make_service()
        fill(svc.bench.db)
        try:
            status, headers, raw = call(svc.url, "POST", path, {**ROUTE, "stream": stream},
                                        {"anthropic-version": "2023-06-01"})
        finally:
            free(svc.bench.db)
        assert status == 200
        if stream:   # its headers went out before the turn ended: its last event says the record was not kept
            headers = {k: v for k, v in headers.items() if k.lower() != "x-bench-call"}
        else:
            assert headers.get("x-bench-record") == "not kept" and "x-bench-call" not in headers
        assert_not_kept(raw, headers, note=False)   # a route turn's words are the member's own, left as they are


def test_mcp_the_ask_page_and_bench_ask_say_it_too(home, make_service, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))                 # nothing piped in to `bench ask`
    with FakeOpenAI() as fake:
        configure(home, {"fake": (fake, "openai")}, {"a": ("fake", "m-a"), "b": ("fake", "m-b")},
                  {"core": {"members": ["a", "b"], "explore": 0}})
        svc = make_service()
        http, prompt = Http(svc.url), "x" * 5000
        sid = open_session(http)
        fill(svc.bench.db)
        try:
            asked = http("POST", "/mcp", rpc(2, "tools/call", {"name": "ask", "arguments": {
                "collection": "core", "prompt": prompt}}), {**ACCEPT, "Mcp-Session-Id": sid})[2]["result"]
            page = Session(svc.url)
            _, headers, text = page.request("POST", "/ask/stream", urlencode(
                {"collection": "core", "prompt": prompt, "csrf": page.csrf}).encode(),
                {"Content-Type": "application/x-www-form-urlencoded"})
            code = main(["ask", "core", prompt, "--url", svc.url])
        finally:
            free(svc.bench.db)
    said = asked["content"][0]["text"]
    assert not asked["isError"] and "Not recorded: the record store cannot write" in said, said
    assert "call `verdict` once" not in said and not record_ids(said.encode(), {})
    assert asked["structuredContent"]["record"]["kept"] is False
    assert [s["call"] for s in asked["structuredContent"]["seats"]] == [None, None]
    done = json.loads(text.strip().splitlines()[-1])["done"]          # the page hides its verdict forms on this
    assert done["record"]["kept"] is False and "cannot write" in done["record"]["why"], done
    out = capsys.readouterr()
    assert code == 0 and "Not recorded" in out.out and "Not recorded: the record store cannot write" in out.err
    assert "bench verdict CALL" not in out.err and not record_ids((out.out + out.err).encode(), {})


# ---- a real full disk ----------------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path):
    """A 64 MB tmpfs (Linux, as root); skipped where mounting one is not allowed."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a real full disk needs Linux and root (mount -t tmpfs)")
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(where)], capture_output=True)
    if mounted.returncode:
        pytest.skip(f"mounting a tmpfs is not allowed here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill_disk(where: Path) -> Path:
    """Use up every free byte of the disk holding `where`: a file written until the disk says it is full."""
    filler = where / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 1 << 12, 1):
            try:
                while os.write(fd, b"\0" * size):
                    pass
            except OSError:
                continue
    finally:
        os.close(fd)
    return filler


def test_on_a_real_full_disk_replies_say_so_compaction_refuses_and_nothing_acknowledged_is_lost(
        small_disk, make_service, monkeypatch):
    data = small_disk / "data"
    monkeypatch.setenv("BENCHWARMERS_HOME", str(data))
    home_mod.init(data)
    with FakeOpenAI() as fake:
        configure(data, {"fake": (fake, "openai")}, {"a": ("fake", "m-a"), "b": ("fake", "m-b")},
                  {"core": {"members": ["a", "b"], "explore": 0}})
        ask = {"model": "bench/core", "messages": [{"role": "user", "content": "x" * 2000}]}
        svc = make_service(home=data)
        status, headers, raw = call(svc.url, "POST", "/v1/chat/completions", ask)
        kept = {s["call"] for s in json.loads(raw)["bench"]["seats"]}
        assert status == 200 and len(kept) == 2
        svc.bench.db.truncate_wal()        # every write from now on needs new room on the disk
        filler = fill_disk(small_disk)
        unkept = []
        for _ in range(4):
            status, headers, raw = call(svc.url, "POST", "/v1/chat/completions", ask)
            assert status == 200
            unkept.append(raw)
        assert any(benches(r)[-1].get("record") for r in unkept), "the full disk was never felt"
        for r in unkept:   # each reply either was kept, or says it was not and names nothing
            bench = benches(r)[-1]
            if bench.get("record"):
                assert_not_kept(r, {})
            else:
                kept |= {s["call"] for s in bench["seats"]}
        status, _, raw = call(svc.url, "POST", "/bench/store/compact", {})
        err = json.loads(raw)["error"]
        assert status == 507 and err["code"] == "insufficient_storage", raw
        assert re.search(r"needs [\d.,]+ MB free in the data folder; [\d.,]+ MB is free\. Nothing was changed",
                         err["message"]), err["message"]
        filler.unlink()                    # room again: what is answered now is kept, and compaction runs
        status, headers, raw = call(svc.url, "POST", "/v1/chat/completions", ask)
        assert status == 200 and "record" not in json.loads(raw)["bench"]
        kept |= {s["call"] for s in json.loads(raw)["bench"]["seats"]}
        assert call(svc.url, "POST", "/bench/store/compact", {})[0] == 200
        svc.stop()
        svc = make_service(home=data)      # after a restart, every id a reply named is there
        for cid in kept:
            assert call(svc.url, "GET", f"/bench/calls/{cid}")[0] == 200, cid
