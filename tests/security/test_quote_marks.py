"""The points' quotes marked in a seat's answer: the quote is escaped before it is matched, only text between tags is
marked, and a hostile quote or claim (from an untrusted referee about untrusted answers) puts no markup in a page."""
from __future__ import annotations

import json

from benchwarmers.dashboard import markdown
from benchwarmers.dashboard.quotemark import mark
from tests.helpers.dashboard import Session
from tests.helpers.http import Http
from tests.helpers.panel import body, fake, setup_bench  # noqa: F401  (the fake fixture)

EVIL = "<script>alert(1)</script>"


def test_a_hostile_quote_is_marked_as_the_escaped_text_it_is():
    rendered = markdown.render(f"Look: {EVIL} and   more\nwords here.")
    out = mark(rendered, [EVIL, "more words", '"><img src=x onerror=alert(2)>'])
    assert "<script>" not in out and "<img" not in out
    assert "<mark>&lt;script&gt;alert(1)&lt;/script&gt;</mark>" in out
    assert "<mark>more\nwords</mark>" in out or "<mark>more words</mark>" in out.replace("   ", " ")


def test_words_inside_a_tag_are_never_marked():
    rendered = markdown.render("[the docs](https://example.com/the-docs) say the-docs")
    out = mark(rendered, ["the-docs", "href"])
    assert 'href="https://example.com/the-docs"' in out       # the attribute untouched
    assert out.count("<mark>") == 1 and "<mark>the-docs</mark>" in out


def test_a_quote_never_cuts_an_entity_in_two():
    rendered = markdown.render("a & b < c")
    assert "<mark>" not in mark(rendered, ["amp;", "&l"])
    assert "<mark>a &amp; b</mark>" in mark(rendered, ["a & b"])


def test_a_quote_across_inline_marks_is_marked_piece_by_piece():
    """A whole sentence holding code, bold, a hard line break and a link is marked as its text reads, each <mark>
    around text alone (never across a tag, so the markup stays well formed); a second quote inside it adds none."""
    rendered = markdown.render("Use `foo()` to call **it** now,  \nthen [the docs](https://x.example/d) say so.")
    out = mark(rendered, ["Use `foo()` to call **it** now, then [the docs](https://x.example/d) say", "it now"])
    assert out == ('<p><mark>Use </mark><code><mark>foo()</mark></code><mark> to call </mark><strong><mark>it'
                   '</mark></strong><mark> now,<br>then </mark><a href="https://x.example/d" rel="noopener noreferrer '
                   'nofollow"><mark>the docs</mark></a><mark> say</mark> so.</p>')


def test_a_quote_that_closes_the_mark_is_text(home, fake, make_service):
    """End to end: a seat answers markup, the referee quotes it and names a claim of markup; the call page shows both
    as text, the quote marked."""
    setup_bench(home, fake, {"core": {"members": ["a", "b"], "explore": 0, "merge_model": "merger",
                                      "points": "all"}})
    fake.script("m-a", f"It is {EVIL} here.")
    fake.script("m-b", "Nothing </mark><b>bold</b> here.")
    fake.script("m-merge", json.dumps({"points": [{
        "claim": '"><img src=x onerror=alert(3)>', "assert": [1], "deny": [2],
        "quotes": {"1": EVIL, "2": "</mark><b>bold</b>"}}]}))
    svc = make_service()
    status, _, data = Http(svc.url)("POST", "/v1/chat/completions", body())
    assert status == 200 and data["bench"]["points"], data
    page = Session(svc.url).get(f"/calls/{data['bench']['panel']}")[2]
    assert "<script>alert" not in page and "<img src=x" not in page and "<b>bold" not in page
    assert "<mark>&lt;script&gt;alert(1)&lt;/script&gt;</mark>" in page
    assert "<mark>&lt;/mark&gt;&lt;b&gt;bold&lt;/b&gt;</mark>" in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(3)&gt;" in page
