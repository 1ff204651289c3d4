"""Rendering cost: a model's answer is hostile input to the dashboard's Markdown renderer and to the marking of the
points' quotes in it, so both must stay linear in it. Worst cases of 256 KB (deep lists and quotes, marker floods,
long lines, many links; quotes that nearly match everywhere) are timed against the same size of plain prose, as a
ratio, in a child process that is stopped when one never finishes. A call's page renders each answer once, then
serves the HTML kept for its text: again only when that text changes."""
from __future__ import annotations

import json
import secrets
import subprocess
import sys
import threading
import uuid
from pathlib import Path

from benchwarmers.dashboard.markup import Html
from benchwarmers.dashboard.rendered import KEPT
from tests.fakes import Reply
from tests.helpers.dashboard import Session
from tests.helpers.data import configure, write
from tests.helpers.http import Http
from tests.helpers.panel import wait_for
from tests.security.attack import bench_data

ROOT = Path(__file__).resolve().parent.parent.parent
# The worst cases and their timing are benchmarks/rendering.py's (BENCHMARKS.md has its figures), run as a child.
# Linear renderings of marker-dense text cost tens of times plain prose (one Python step per marker or line; the
# worst, one-line lists nested 8 deep, about 60x); the quadratic and exponential ones this replaced were thousands
# of times at this size, or never finished.
MAX_RATIO = 100
# Marking reads the rendered text once whatever the quotes are: entity-dense answers cost up to about 20x plain
# prose; the marker this replaced took about 100 s over the first case (one regex scan from the start for each
# place the quote nearly matched), hours over the second.
MAX_MARK_RATIO = 60
SIZE = 256 * 1024


def timed(what: str, deadline: float) -> tuple[list[dict], bool]:
    """The child's results, one a line, and whether it finished before the deadline."""
    command = [sys.executable, str(ROOT / "benchmarks" / "rendering.py"), "--json", what, "--size", str(SIZE)]
    try:
        done = subprocess.run(command, cwd=str(ROOT), capture_output=True, text=True, timeout=deadline,
                              env={"PYTHONPATH": str(ROOT), "PATH": ""})
        out, finished = done.stdout, True
        assert done.returncode == 0, done.stderr[-2000:]
    except subprocess.TimeoutExpired as e:
        out, finished = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), False
    return [json.loads(line) for line in out.splitlines() if line.strip()], finished


def assert_linear(what: str, bound: float, cases: int, deadline: float) -> None:
    """Each worst case within `bound` times plain prose; one that runs past the deadline is named as the failure."""
    results, finished = timed(what, deadline)
    assert finished, f"never finished after {results[-1]['case'] if results else 'start-up'}"
    slow = {r["case"]: round(r["ratio"]) for r in results if r.get("ratio", 0) > bound}
    assert not slow, f"cost relative to plain prose of the same size: {slow}"
    assert len(results) == cases + 1


def test_rendering_is_linear_in_the_answer():
    assert_linear("render", MAX_RATIO, 30, deadline=300)


def test_marking_quotes_is_linear_in_the_answer():
    """One quote of 8 characters over a crafted 256 KB answer took about 100 s a view of the call page."""
    assert_linear("mark", MAX_MARK_RATIO, 10, deadline=120)


def seat_html(session: Session, panel: str) -> str:
    status, _, page = session.get(f"/calls/{panel}")
    assert status == 200, page[:500]
    return page


def test_hostile_answers_render_on_the_call_page_and_the_ask_stream(home, fake, make_service):
    """600 nested quotes were a 500 (RecursionError) on the call page; a 350-deep list never rendered at all."""
    bench_data(home, fake)
    fake.script("m-a", Reply(text=">" * 600 + " deep"))
    fake.script("m-b", Reply(text="\n".join("  " * k + "- level" for k in range(350))))
    svc = make_service()
    session = Session(svc.url)
    status, headers, _ = session.form("/ask", {"collection": "core", "prompt": "quote me"})
    assert status == 303
    page = seat_html(session, headers["location"].rsplit("/", 1)[1])
    assert "deep" in page and page.count("<blockquote>") <= 10 and page.count("<ul>") <= 10
    fake.script("m-a", Reply(text=">" * 600 + " again"))
    fake.script("m-b", Reply(text="_a " * 20000))
    body = f"collection=core&prompt=stream&csrf={session.csrf}".encode()
    status, _, text = session.request("POST", "/ask/stream", body,
                                      {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 200
    seats = [json.loads(line)["seat"] for line in text.splitlines() if line.startswith('{"seat"')]
    assert len(seats) == 2 and all(s["status"] == "ok" and s["nodes"] for s in seats)
    assert depth(seats) <= 40


def depth(nodes) -> int:
    if isinstance(nodes, list):
        return max((depth(n) for n in nodes), default=0)
    if isinstance(nodes, dict):
        return 1 + depth(nodes.get("c") or nodes.get("nodes") or [])
    return 0


# ---- rendered once ---------------------------------------------------------------------------------

def ask_core(svc) -> str:
    status, _, data = Http(svc.url)("POST", "/v1/chat/completions",
                                    {"model": "bench/core", "messages": [{"role": "user", "content": "once"}]})
    assert status == 200, data
    return data["bench"]["panel"]


def test_a_call_page_renders_each_answer_once(home, fake, make_service):
    """Each view of a call's page (and the Ask page reads it again after each verdict) rendered every answer anew."""
    bench_data(home, fake)
    words = f"Kept {uuid.uuid4().hex}: the **same** answer"          # a text no other test has rendered
    fake.script("m-a", Reply(text=words + " from a"))
    fake.script("m-b", Reply(text=words + " from b"))
    svc = make_service()
    panel, session = ask_core(svc), Session(svc.url)
    before = KEPT.made["markdown"]
    first = seat_html(session, panel)
    assert KEPT.made["markdown"] == before + 2
    for _ in range(3):
        assert seat_html(session, panel).count("<strong>same</strong> answer from") == 2
    assert first.count("<strong>same</strong> answer from") == 2 and KEPT.made["markdown"] == before + 2


def test_an_answer_that_changes_is_rendered_again(home, fake, make_service):
    """Kept by its text, never by its call: an answer read otherwise (a key learnt since, cut as the record is
    read) is rendered anew, and the page never shows the HTML of what it said before."""
    bench_data(home, fake)
    key = f"sk-later-{uuid.uuid4().hex}"
    fake.script("m-a", Reply(text=f"Your key {key} is *fine*."))
    fake.script("m-b", Reply(text=f"Nothing to cut {key[9:]}"))
    svc = make_service()
    panel, session = ask_core(svc), Session(svc.url)
    before = KEPT.made["markdown"]
    assert key in seat_html(session, panel)
    status, _, made = Http(svc.url)("POST", "/bench/endpoints", {"name": "later", "base_url": fake.url, "key": key})
    assert status == 201, made                                       # the key is known from now on
    page = seat_html(session, panel)
    assert key not in page and "Your key [redacted] is <em>fine</em>." in page
    assert KEPT.made["markdown"] == before + 3                       # a's answer twice, b's once


def test_a_late_seats_answer_is_rendered_once_it_is_amended(home, fake, make_service):
    """An explore seat still out when the panel answers: its page says so, then shows the answer the record got."""
    configure(home, {"fake": (fake, "openai")}, {"a": ("fake", "m-a"), "b": ("fake", "m-b"), "s": ("fake", "m-s")},
              {"core": {"members": ["a", "b"], "explore": 1}})
    write(home, "settings.json", {"explore_grace_seconds": 0.2})
    gate, late = threading.Event(), f"Late {uuid.uuid4().hex}, in **bold**"
    fake.script("m-s", Reply(text=late, hold=gate))
    svc = make_service()
    try:
        panel, session = ask_core(svc), Session(svc.url)
        assert "still running" in seat_html(session, panel) and late.split(",")[0] not in seat_html(session, panel)
    finally:
        gate.set()
    api = Http(svc.url)
    wait_for(lambda: all(s["status"] != "running" for s in api("GET", f"/bench/history/{panel}")[2]["seats"]))
    before = KEPT.made["markdown"]
    page = seat_html(session, panel)
    assert late.split(",")[0] + ", in <strong>bold</strong>" in page and KEPT.made["markdown"] == before + 1


def test_the_kept_html_is_bounded_in_bytes():
    from benchwarmers.dashboard.rendered import Kept
    kept = Kept(most=64 * 1024, most_one=16 * 1024)
    for k in range(100):                                            # random text: about 6 KB each, compressed
        kept.get("markdown", (f"answer {k}",), lambda: Html(secrets.token_urlsafe(6000)))
    entries, size = kept.size()
    assert size <= 64 * 1024 and 4 <= entries < 100
    kept.get("markdown", ("huge",), lambda: Html(secrets.token_urlsafe(30000)))    # past most_one: made, not kept
    assert kept.size()[0] == entries and kept.made["markdown"] == 101
    last = kept.get("markdown", ("answer 99",), lambda: Html("never made again"))
    assert kept.made["markdown"] == 101 and len(last) == 8000
