"""What a hostile answer costs the dashboard: the Markdown renderer and the marking of the points' quotes on the worst
shapes of answer known, each against plain prose of the same size (CPU time of this thread, best of a few runs), and
what a view of an answer already rendered costs.

    python benchmarks/rendering.py                  # Markdown tables at 256 KB and 1 MB (a few minutes on 2 cores)
    python benchmarks/rendering.py --sizes 64,256   # other sizes, in KB
    python benchmarks/rendering.py --json render --size 262144   # one JSON line a case (tests/security/)

--root DIR measures another checkout's dashboard.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

WORDS = "the of and a to in is you that it was for on are as with they at be this have from or one".split()
SENTENCE = "The last sentence is the one quoted, whole, as a referee quotes a seat."


def fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def prose(size: int) -> str:
    """Lines of 14 common words, a blank line every six: what an ordinary answer looks like to the renderer."""
    rng, lines, total = random.Random(7), [], 0
    while total < size:
        line = " ".join(rng.choice(WORDS) for _ in range(14))
        lines.append(line + ("\n" if len(lines) % 6 == 5 else ""))
        total += len(line) + 1
    return "\n".join(lines)[:size]


def render_cases(size: int) -> dict[str, str]:
    """Answers whose structure or marks cost the renderer most, each `size` characters or about."""
    def f(unit):
        return fill(unit, size)
    return {
        "deep list": "\n".join("  " * k + "- item" for k in range(600)) + "\n" + f("  " * 300 + "- x\n"),
        "deep numbered list": "\n".join("   " * k + "1. item" for k in range(400)),
        "deep quote": f(">"), "deep quote lines": "\n".join(">" * (k % 600) + " a" for k in range(size // 300)),
        "underscore flood": f("_a "), "star flood": f("*a "), "strong flood": f("**a "), "tilde flood": f("~~a "),
        "backtick flood": "`" + f("``"), "backtick mix": f("` `` ``` "), "bracket flood": f("["),
        "open links": f("[a]("), "open images": f("![a]("), "many links": f("[a](https://x.example/b) "),
        "open autolinks": f("<http://"), "bare urls": f("http://"), "url of dots": "http://" + "." * size,
        "long line": f("word "), "long heading": "# a" + " " * size + "x",
        "long table rule": "a|b\n--" + " " * size + "x", "unclosed fence": f("```\n"), "line breaks": f("a  \n"),
        "interrupted paragraphs": f("a\n- b\nc\n> d\n"), "mixed": f("- *a* [b](http://c) `d`\n  > e _f_\n"),
        "one-line nests": f("- - - - - - - >\n"), "one-line lists": f("- - - - - - - - a\n"),
        "one-line nests apart": f("- - - - - - - - a\n\n"), "deep quotes apart": f(">>>>>>>>a\n\n"),
        "small tables": f("a|b\n--|--\nc|d\n\n"), "lists and paragraphs": f("- a\nb\n"),
    }


def mark_cases(size: int) -> dict[str, tuple[str, list[str]]]:
    """Answers and quotes that cost a naive marker most: near matches everywhere, entities, tags, spaces."""
    near = "a " * 150 + "b"                    # matches everywhere but at its last word
    return {
        "entity halves": ("< plant! " * (size // 9) + "; plant!", ["; plant!"]),   # each "&lt;" nearly a match
        "near misses": (fill("a ", size) + near, [near]),
        "24 near misses": (fill("a ", size) + near, [near[:-1] + c for c in "bcdefghijklmnopqrstuvwxy"]),
        "ampersands": (fill("& ", size) + "& x", ["& " * 100 + "x"]),
        "space runs": (fill("a  ", size) + "a b", ["a " * 100 + "b"]),
        "inline marks": (fill("*a* ", size) + " b", ["a " * 100 + "b"]),
        "code spans": (fill("`a` ", size) + " b", ["`a` " * 60 + "b"]),
        "escaped flood": (fill("<", size), ["<" * 200 + ">"]),
        "short paragraphs": (fill("a\n\n", size), ["a a"]),
        "deep lists": (fill("- - - - - - - a\n", size), ["a a a"]),
    }


def best(work, runs: int) -> float:
    """The least CPU time of this thread over `runs` runs (other processes' load shows least in it)."""
    spent = []
    for _ in range(runs):
        start = time.thread_time()
        work()
        spent.append(time.thread_time() - start)
    return max(min(spent), 1e-6)


def rendering(size: int):
    """("prose", seconds), then (case, seconds, ratio to prose) for each worst case."""
    from benchwarmers.dashboard import markdown
    plain = prose(size)
    base = best(lambda: markdown.render(plain), 5)
    yield "prose", base
    for name, text in render_cases(size).items():
        spent = best(lambda: markdown.render(text), 2)
        yield name, spent, spent / base


def marking(size: int):
    """As rendering(), for marking the quotes in an answer already rendered."""
    from benchwarmers.dashboard import markdown
    from benchwarmers.dashboard.quotemark import mark
    plain = markdown.render(prose(size) + "\n\n" + SENTENCE)
    base = best(lambda: mark(plain, [SENTENCE]), 5)
    yield "prose", base
    for name, (text, quotes) in mark_cases(size).items():
        rendered = markdown.render(text)
        spent = best(lambda: mark(rendered, quotes), 3)
        yield name, spent, spent / base


def kept_view(size: int) -> tuple[float, float]:
    """(first view, later view) of one answer of the worst shape through the kept HTML, in seconds."""
    from benchwarmers.dashboard.rendered import Kept
    from benchwarmers.dashboard import markdown
    kept, text = Kept(), render_cases(size)["one-line nests"]
    first = best(lambda: kept.get("markdown", (text,), lambda: markdown.render(text)), 1)
    return first, best(lambda: kept.get("markdown", (text,), lambda: markdown.render(text)), 5)


def table(title: str, rows, size: int) -> None:
    rows = list(rows)
    print(f"\n{title}, {size // 1024} KB: plain prose {rows[0][1] * 1000:.1f} ms\n")
    print("| case | ms | x prose |\n|---|---:|---:|")
    for name, spent, ratio in sorted(rows[1:], key=lambda r: -r[2]):
        print(f"| {name} | {spent * 1000:.1f} | {ratio:.1f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="256,1024", help="answer sizes in KB, comma-separated (default 256,1024)")
    ap.add_argument("--json", choices=("render", "mark"), help="one JSON line a case, for the tests")
    ap.add_argument("--size", type=int, default=256 * 1024, help="with --json: the size in characters")
    ap.add_argument("--root", type=Path, help="another checkout to measure")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(args.root or Path(__file__).resolve().parent.parent))
    if args.json:
        for row in (rendering if args.json == "render" else marking)(args.size):
            print(json.dumps({"case": row[0], "seconds": row[1], **({"ratio": row[2]} if len(row) > 2 else {})}),
                  flush=True)
        return 0
    for kb in (int(k) for k in args.sizes.split(",")):
        size = kb * 1024
        table("Rendering", rendering(size), size)
        table("Marking quotes", marking(size), size)
        first, later = kept_view(size)
        print(f"\nA call page's view of the worst case, {kb} KB: first {first * 1000:.0f} ms, "
              f"then {later * 1000:.2f} ms (its HTML kept)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
