"""Rendering cost: a model's answer is hostile input to the dashboard's Markdown renderer, so rendering must stay
linear in it. Worst cases of 256 KB (deep lists and quotes, marker floods, long lines, many links) are timed
against the same size of plain prose, as a ratio, in a child process that is stopped when one never finishes."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.fakes import Reply
from tests.helpers.dashboard import Session
from tests.security.attack import bench_data

ROOT = Path(__file__).resolve().parent.parent.parent
# Linear renderings of marker-dense text cost tens of times plain prose (one Python step per marker or line; the
# worst, one-line lists nested 8 deep, about 60x); the quadratic and exponential ones this replaced were thousands
# of times at this size, or never finished.
MAX_RATIO = 100
SIZE = 256 * 1024

TIMING = textwrap.dedent('''
    import json, random, sys, time
    from benchwarmers.dashboard import markdown
    SIZE = int(sys.argv[1])

    def fill(unit):
        return (unit * (SIZE // len(unit) + 1))[:SIZE]

    def cost(text, runs):
        best = None
        for _ in range(runs):
            start = time.thread_time()
            markdown.render(text)
            spent = time.thread_time() - start
            best = spent if best is None else min(best, spent)
        return max(best, 1e-6)

    random.seed(7)
    words = "the of and a to in is you that it was for on are as with they at be this have from or one".split()
    lines, size = [], 0
    while size < SIZE:
        line = " ".join(random.choice(words) for _ in range(14))
        lines.append(line + ("\\n" if len(lines) % 6 == 5 else ""))
        size += len(line) + 1
    prose = "\\n".join(lines)[:SIZE]
    worst = {
        "deep list": "\\n".join("  " * k + "- item" for k in range(600)) + "\\n" + fill("  " * 300 + "- x\\n"),
        "deep numbered list": "\\n".join("   " * k + "1. item" for k in range(400)),
        "deep quote": fill(">"),
        "deep quote lines": "\\n".join(">" * (k % 600) + " a" for k in range(SIZE // 300)),
        "underscore flood": fill("_a "), "star flood": fill("*a "), "strong flood": fill("**a "),
        "tilde flood": fill("~~a "), "backtick flood": "`" + fill("``"), "backtick mix": fill("` `` ``` "),
        "bracket flood": fill("["), "open links": fill("[a]("), "open images": fill("![a]("),
        "many links": fill("[a](https://x.example/b) "), "open autolinks": fill("<http://"),
        "bare urls": fill("http://"), "url of dots": "http://" + "." * SIZE,
        "long line": fill("word "), "long heading": "# a" + " " * SIZE + "x",
        "long table rule": "a|b\\n--" + " " * SIZE + "x", "unclosed fence": fill("```\\n"),
        "line breaks": fill("a  \\n"), "interrupted paragraphs": fill("a\\n- b\\nc\\n> d\\n"),
        "mixed": fill("- *a* [b](http://c) `d`\\n  > e _f_\\n"),
        "one-line nests": fill("- - - - - - - >\\n"), "one-line lists": fill("- - - - - - - - a\\n"),
        "one-line nests apart": fill("- - - - - - - - a\\n\\n"), "deep quotes apart": fill(">>>>>>>>a\\n\\n"),
        "small tables": fill("a|b\\n--|--\\nc|d\\n\\n"), "lists and paragraphs": fill("- a\\nb\\n"),
    }
    base = cost(prose, 5)
    print(json.dumps({"case": "prose", "seconds": base}), flush=True)
    for name, text in worst.items():
        print(json.dumps({"case": name, "ratio": cost(text, 2) / base}), flush=True)
''')


def test_rendering_is_linear_in_the_answer():
    """Each worst case within MAX_RATIO of plain prose; one that runs past the deadline is named as the failure."""
    try:
        done = subprocess.run([sys.executable, "-c", TIMING, str(SIZE)], cwd=str(ROOT), capture_output=True,
                              text=True, timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": ""})
        out, finished = done.stdout, True
        assert done.returncode == 0, done.stderr[-2000:]
    except subprocess.TimeoutExpired as e:
        out, finished = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), False
    results = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert finished, f"rendering never finished after {results[-1]['case'] if results else 'start-up'}"
    slow = {r["case"]: round(r["ratio"]) for r in results if r.get("ratio", 0) > MAX_RATIO}
    assert not slow, f"cost relative to plain prose of the same size: {slow}"
    assert len(results) == 31


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
