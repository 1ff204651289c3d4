"""Charts drawn by the server as inline SVG (no script, no library): stacked bars, a line with its band, a scatter.

Colours come from the stylesheet through classes, so both themes apply; every chart has a title and a
description for screen readers, and the page shows its numbers beside it as a table.
"""
from __future__ import annotations

import math

from .markup import Html, trusted
from .markup import escape as e
from .render import token

W, H = 560, 220                    # the drawing's own units; it scales to the width of its box
LEFT, RIGHT, TOP, BOTTOM = 86, 14, 24, 40          # room on the left for a tick such as "3.75 ms" on a phone


def frame(title: str, desc: str, inner: str) -> Html:
    """The drawing: this module escapes every text it puts in (title, labels, names), so it is marked trusted."""
    return trusted(f'<svg class="chart" viewBox="0 0 {W} {H}" role="img" aria-label="{e(title)}" '
            f'preserveAspectRatio="xMidYMid meet"><title>{e(title)}</title><desc>{e(desc)}</desc>{inner}</svg>')


def nice_max(value: float) -> float:
    """A round top for an axis: 1, 2, 5 or 10 times a power of ten."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= value)


def y_axis(top: float, fmt=lambda v: f"{v:g}") -> str:
    out = []
    for i in range(5):
        value = top * i / 4
        y = H - BOTTOM - (H - TOP - BOTTOM) * i / 4
        out.append(f'<line class="grid" x1="{LEFT}" x2="{W - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
                   f'<text class="tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{e(fmt(value))}</text>')
    return "".join(out)


def x_labels(labels: list[str], every: int) -> str:
    """Every `every`-th label, counted back from the last (today), so the newest day is always named."""
    step = (W - LEFT - RIGHT) / max(1, len(labels))
    last = len(labels) - 1
    return "".join(f'<text class="tick" x="{LEFT + step * (i + 0.5):.1f}" y="{H - BOTTOM + 20}" '
                   f'text-anchor="middle">{e(label)}</text>'
                   for i, label in enumerate(labels) if (last - i) % every == 0)


def short_day(day: str) -> str:
    return day[5:] if len(day) == 10 else day     # 2024-05-01 -> 05-01


def count_top(value: int) -> int:
    """The top of an axis of counts: four whole-numbered steps of 1, 2 or 5 times a power of ten."""
    return int(max(1, nice_max(value / 4)) * 4)


def stacked_bars(title: str, days: list[str], series: list[tuple[str, list[int]]]) -> Html:
    """One bar per day, stacked by series (name, counts); empty days stay empty."""
    totals = [sum(counts[i] for _, counts in series) for i in range(len(days))]
    top = count_top(max(totals or [0]))
    step = (W - LEFT - RIGHT) / max(1, len(days))
    scale = (H - TOP - BOTTOM) / top
    bars = []
    for i in range(len(days)):
        y: float = H - BOTTOM
        for name, counts in series:
            height = counts[i] * scale
            if height:
                y -= height
                bars.append(f'<rect class="s-{token(name)}" x="{LEFT + step * i + step * 0.15:.1f}" y="{y:.1f}" '
                            f'width="{step * 0.7:.1f}" height="{height:.1f}"><title>{e(days[i])}: {counts[i]} '
                            f"{e(name)}</title></rect>")
    desc = f"Calls per day from {days[0]} to {days[-1]}; the table beside it has the numbers." if days else ""
    legend = "".join(f'<tspan class="s-{token(n)}-text" dx="10">■ {e(n)}</tspan>' for n, _ in series)
    return frame(title, desc, y_axis(top, lambda v: f"{v:.0f}") + "".join(bars)
                 + x_labels([short_day(d) for d in days], max(1, len(days) // 5))
                 + f'<text class="legend" x="{LEFT}" y="{H - 4}">{legend}</text>')


def line(title: str, labels: list[str], values: list, band: list | None = None, top: float | None = None,
         fmt=lambda v: f"{v:g}") -> Html:
    """A line through the known values (None leaves a gap), with an optional band [(low, high)] behind it."""
    known = [v for v in values if v is not None]
    top = top or nice_max(max(known or [0]))
    step = (W - LEFT - RIGHT) / max(1, len(labels))

    def xy(i, v):
        return LEFT + step * (i + 0.5), H - BOTTOM - (H - TOP - BOTTOM) * (v / top)
    shapes = []
    if band:
        upper = [(i, b[1]) for i, b in enumerate(band) if b]
        lower = [(i, b[0]) for i, b in enumerate(band) if b][::-1]
        if upper:
            points = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(i, v) for i, v in upper + lower))
            shapes.append(f'<polygon class="band" points="{points}"/>')
    run: list = []
    for i, v in enumerate(values + [None]):
        if v is None:
            if len(run) > 1:
                shapes.append('<polyline class="line" points="' + " ".join(f"{x:.1f},{y:.1f}" for x, y in run) + '"/>')
            run = []
            continue
        run.append(xy(i, v))
        x, y = xy(i, v)
        shapes.append(f'<circle class="dot" cx="{x:.1f}" cy="{y:.1f}" r="3"><title>{e(labels[i])}: '
                      f"{e(fmt(v))}</title></circle>")
    desc = f"{title}, {labels[0]} to {labels[-1]}; the table beside it has the numbers." if labels else title
    return frame(title, desc, y_axis(top, fmt) + "".join(shapes)
                 + x_labels([short_day(d) for d in labels], max(1, len(labels) // 5)))


def scatter(title: str, points: list[dict]) -> Html:
    """Who to trust: x = answers judged (log scale), y = useful rate with its interval; flagged points marked."""
    most = max([p["judged"] for p in points] or [1])
    right = math.log10(nice_max(max(most, 10)))

    def x_of(judged):
        return LEFT + (W - LEFT - RIGHT) * (math.log10(max(judged, 1)) / right)

    def y_of(rate):
        return H - BOTTOM - (H - TOP - BOTTOM) * rate
    shapes = []
    for p in merge_same(points):
        x, y = x_of(p["judged"]), y_of(p["rate"])
        lo, hi = p.get("interval") or (p["rate"], p["rate"])
        cls = "dot wrong" if p.get("flagged") else "dot"
        shapes.append(f'<line class="whisker" x1="{x:.1f}" x2="{x:.1f}" y1="{y_of(lo):.1f}" y2="{y_of(hi):.1f}"/>')
        mark = (f'<rect class="{cls}" x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8"/>' if p.get("flagged")
                else f'<circle class="{cls}" cx="{x:.1f}" cy="{y:.1f}" r="4"/>')
        shapes.append(f'<g>{mark}<title>{e(p["label"])}: {p["rate"] * 100:.0f}% useful of {p["judged"]} '
                      f'judged{" (confidently wrong)" if p.get("flagged") else ""}</title></g>'
                      f'<text class="point-label" x="{x + 7:.1f}" y="{y - 6:.1f}">{e(p["label"])}</text>')
    ticks = "".join(f'<text class="tick" x="{x_of(v):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle">{v}</text>'
                    for v in (1, 10, 100, 1000, 10000) if math.log10(v) <= right)
    axis = f'<text class="tick" x="{W - RIGHT}" y="{H - 4}" text-anchor="end">answers judged (log scale)</text>'
    desc = "Each model's useful rate against how many of its answers were judged; squares are confidently wrong."
    return frame(title, desc, y_axis(1.0, lambda v: f"{v * 100:.0f}%") + ticks + axis + "".join(shapes))


def merge_same(points: list[dict]) -> list[dict]:
    """Points at the same place share one mark, labelled with every name (none hides another)."""
    out: dict = {}
    for p in points:
        key = (p["judged"], round(p["rate"], 3), bool(p.get("flagged")))
        if key in out:
            out[key] = {**out[key], "label": out[key]["label"] + ", " + p["label"]}
        else:
            out[key] = dict(p)
    return list(out.values())


def seconds_format(values: list):
    """How to write seconds on an axis, by the largest value: milliseconds, hundredths or tenths of a second."""
    top = max([v for v in values if v is not None] or [1])
    if top < 0.1:
        return lambda v: f"{v * 1000:.3g} ms"
    return (lambda v: f"{v:.2f} s") if top < 1 else (lambda v: f"{v:.1f} s")
