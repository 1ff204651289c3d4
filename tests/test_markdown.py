"""The dashboard's Markdown renderer: every character of an answer stays text; only a small set of tags is made."""
from __future__ import annotations

import re

import pytest

from benchwarmers.dashboard import charts
from benchwarmers.dashboard.markdown import MAX_DEPTH, PLAIN_PAST, TAGS, parse, render

EVIL = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'


@pytest.mark.parametrize("text, html", [
    ("**bold** and *it* and `x<y>` and ~~no~~", "<p><strong>bold</strong> and <em>it</em> and <code>x&lt;y&gt;</code>"
                                                " and <del>no</del></p>"),
    ("# Title\n\ntext", "<h3>Title</h3><p>text</p>"),
    ("- a\n- b\n  - c", "<ul><li>a</li><li><p>b</p><ul><li>c</li></ul></li></ul>"),
    ("3. three\n4. four", '<ol start="3"><li>three</li><li>four</li></ol>'),
    ("```py\nif a < b:\n    pass\n```", "<pre><code>if a &lt; b:\n    pass</code></pre>"),
    ("> said\n\n---", "<blockquote><p>said</p></blockquote><hr>"),
    ("| a | b |\n|---|---|\n| 1 | 2 |", "<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td>"
                                       "<td>2</td></tr></tbody></table>"),
    ("[docs](https://example.com/a?b=1&c=2)", '<p><a href="https://example.com/a?b=1&amp;c=2" '
                                             'rel="noopener noreferrer nofollow">docs</a></p>'),
    ("snake_case_name, 2*3*4", "<p>snake_case_name, 2*3*4</p>"),
])
def test_markdown_makes_the_usual_shapes(text, html):
    assert render(text) == html


def test_hostile_text_stays_text():
    out = render(f"{EVIL}\n\n[x](javascript:alert(3)) [y](data:text/html,hi) ![pic](http://evil.example/a.png)\n\n"
                 f"<a href='https://x'>raw</a> `{EVIL}`")
    tags = set(re.findall(r"</?([a-zA-Z0-9]+)", out))
    assert tags <= {"p", "code", "a"}, tags              # no img, script or any tag from the input
    assert re.findall(r'href="([^"]*)"', out) == ["https://x"]   # a bare URL is a link; javascript: and data: not
    assert "&lt;script&gt;" in out and "[image: pic]" in out and "javascript:alert(3)" in out
    assert "onerror=alert(2)&gt;" in out and "<img" not in out


def test_nodes_use_only_the_allowed_tags():
    def tags(nodes):
        for n in nodes:
            if isinstance(n, dict):
                yield n["t"]
                yield from tags(n["c"])
    nodes = parse("# h\n\n- **a** [b](https://b.example)\n\n> q\n\n```\nc\n```\n\n| x |\n|---|\n| y |")
    assert set(tags(nodes)) <= TAGS


def test_charts_carry_titles_and_escape_labels():
    svg = charts.scatter("Who", [{"label": EVIL, "judged": 4, "rate": 0.5, "interval": [0.2, 0.8], "flagged": True}])
    assert "<title>Who</title>" in svg and "<script>" not in svg and "&lt;script&gt;" in svg and "<rect" in svg
    bars = charts.stacked_bars("Calls", ["2024-05-01", "2024-05-02"], [("ok", [3, 0]), ("failed", [1, 0])])
    assert bars.count('class="s-ok"') == 1 and bars.count('class="s-failed"') == 1 and ">4<" in bars
    line = charts.line("Seconds", ["d1", "d2", "d3"], [1.0, None, 3.0], band=[[0.5, 1.5], None, [2, 4]])
    assert line.count("<circle") == 2 and "<polygon" in line and "<polyline" not in line   # a gap, not a line
    assert [charts.count_top(v) for v in (0, 3, 5, 12, 99)] == [4, 4, 8, 20, 200]


def test_nesting_stops_at_the_depth_cap_and_keeps_the_text():
    deep = "\n".join("  " * k + f"- level{k}" for k in range(30))
    out = render(deep)
    assert out.count("<ul>") == MAX_DEPTH and "level29" in out
    quotes = render(">" * 600 + " bottom")
    assert quotes.count("<blockquote>") == MAX_DEPTH and "bottom" in quotes


def test_past_the_size_cap_an_answer_is_plain_paragraphs():
    text = "**bold** [l](https://x.example)\n\n" + "word " * (PLAIN_PAST // 5)
    assert render(text).startswith("<p>**bold** [l](https://x.example)</p><p>word word")
    assert set(re.findall(r"</?([a-z0-9]+)", render(text))) == {"p"}


@pytest.mark.parametrize("text, html", [
    ("# C#\n\n## closed ##", "<h3>C#</h3><h4>closed</h4>"),               # closing #s only after a space
    ("``` no closer, and ``two``", "<p>``` no closer, and <code>two</code></p>"),   # an unmatched run is text
    ("_a _b c_ d_", "<p><em>a _b c</em> d_</p>"),
    ("[a](https://x.example \"title\") [b](x trailing)",
     '<p><a href="https://x.example" rel="noopener noreferrer nofollow">a</a> [b](x trailing)</p>'),
])
def test_marks_close_as_written(text, html):
    assert render(text) == html
