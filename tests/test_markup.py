"""The dashboard's renderer: every value escaped unless it is Html, lists joined, a missing value an error."""
from __future__ import annotations

import pytest

from benchwarmers.dashboard.markup import Html, attrs, card, escape, facts, flag, html, join, link, options, table, \
    trusted

HOSTILE = '<script>alert("x")</script>&\''


def test_a_value_is_escaped_unless_it_is_marked():
    out = html('<p title="$t">$body $mark</p>', t=HOSTILE, body=HOSTILE, mark=trusted("<b>ok</b>"))
    assert "<script>" not in out and out.count("&lt;script&gt;") == 2 and "&quot;x&quot;" in out
    assert "<b>ok</b>" in out and isinstance(out, Html)


def test_what_the_renderer_made_is_not_escaped_again():
    inner = html("<i>$x</i>", x="a&b")
    assert html("<p>$inner</p>", inner=inner) == "<p><i>a&amp;b</i></p>"


def test_lists_are_each_escaped_and_joined_and_none_is_nothing():
    assert html("<ul>$items</ul>", items=[html("<li>$x</li>", x="<1>"), "<2>", None]) == \
        "<ul><li>&lt;1&gt;</li>&lt;2&gt;</ul>"
    assert join(["a<", trusted("<br>"), "b"], " · ") == "a&lt; · <br> · b"
    assert escape(None) == "" and escape(3) == "3"


def test_a_placeholder_without_a_value_is_an_error_and_a_dollar_is_doubled():
    with pytest.raises(KeyError):
        html("<p>$missing</p>")
    assert html("<p>$$5 $n</p>", n=2) == "<p>$5 2</p>"


def test_attributes_flags_and_helpers_escape_their_values():
    assert attrs(data_call='a"b', hidden=True, class_=None, title=False) == ' data-call="a&quot;b" hidden'
    assert flag("selected", True) == " selected" and flag("selected", False) == ""
    assert link("/x?a=1&b=2", HOSTILE) == '<a href="/x?a=1&amp;b=2">' + escape(HOSTILE) + "</a>"
    assert options([("a", "<A>")], "a") == '<option value="a" selected>&lt;A&gt;</option>'
    cell = table(["H<"], [[HOSTILE], [trusted("<em>x</em>")]])
    assert "<script>" not in cell and '<td data-label="H&lt;"><em>x</em></td>' in cell
    assert "<script>" not in facts([(HOSTILE, HOSTILE)]) + card(HOSTILE, HOSTILE, anchor=HOSTILE)
