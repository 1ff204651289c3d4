"""python suite/rebench.py: build real-bug tasks (the file before a fix, the lines the fix touched, the file after
the fix as the control) into suite/tasks or another folder, from one of three sources: the history of a git clone
you have (--git), a picks file of fixes chosen before (--picks, from a clone or downloaded and checked against the
pick's sha256, as `bench suite fetch` does), or SWE-rebench-V2 rows (from Hugging Face, or --rows). It exits 1 when
it wrote no task. See suite/REBENCH.md."""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchwarmers.suite import fetch, history, rebench  # noqa: E402
from benchwarmers.suite.tasks import TaskError, load_all, starter_dir, write  # noqa: E402
from benchwarmers.words import plural  # noqa: E402

NOTICE_START = "<!-- rebench tasks: written by suite/rebench.py -->"
NOTICE_END = "<!-- end of rebench tasks -->"


def read_rows(path: Path) -> list[dict]:
    """A JSON list of rows, or JSON Lines (one row a line)."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def keep(row: dict, args) -> bool:
    if args.language and (row.get("language") or "").lower() != args.language.lower():
        return False
    return not args.since or (row.get("created_at") or "") >= args.since


def update_notice(path: Path, lines: list[str]) -> None:
    """Keep the NOTICE section of rebench tasks equal to the tasks that are there."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    section = "\n".join([NOTICE_START, *lines, NOTICE_END])
    if NOTICE_START in text and NOTICE_END in text:
        head, rest = text.split(NOTICE_START, 1)
        text = head + section + rest.split(NOTICE_END, 1)[1]
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section + "\n"
    path.write_text(text, encoding="utf-8")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python suite/rebench.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="examples:\n  python suite/rebench.py --git ~/src/attrs --repo "
                                       "python-attrs/attrs --scan 2000 --limit 5 --out /tmp/tasks\n"
                                       "  python suite/rebench.py --git ~/src/attrs --repo python-attrs/attrs --commit "
                                       "1a2b3c4d\n  python suite/rebench.py --picks benchwarmers/suite/data/rebench-picks.json "
                                       "--out /tmp/tasks\n"
                                       "  python suite/rebench.py --limit 10 --language python --since 2025-06-01\n"
                                       "  python suite/rebench.py --rows rows.jsonl --out /tmp/tasks")
    g = p.add_argument_group("a clone's history (--git)")
    g.add_argument("--git", type=Path, metavar="CLONE", help="a git clone (or bare repository) to read fixes from")
    g.add_argument("--repo", help="its GitHub name, owner/name (it names the task and its URL)")
    g.add_argument("--commit", action="append", default=[], help="build this commit only (repeatable)")
    g.add_argument("--rev", default="HEAD", help="the branch or commit whose history is read (default HEAD)")
    g.add_argument("--license", help="the repository's SPDX licence id, when its licence file is not one this names")
    g.add_argument("--max-lines", type=int, default=history.MAX_CHANGED,
                   help=f"changed lines a fix may have at most (default {history.MAX_CHANGED})")
    k = p.add_argument_group("a picks file (--picks)")
    k.add_argument("--picks", type=Path, help="build the fixes this JSON file lists: from --git when it is given "
                                              "(that repository's picks), else downloaded from GitHub (or "
                                              "--source) and checked against each pick's sha256")
    k.add_argument("--source", help="with --picks: a mirror laid out as OWNER/NAME/COMMIT/PATH, or a folder of such "
                                    "files or of clones at OWNER/NAME (default: GitHub's raw files)")
    r = p.add_argument_group("SWE-rebench-V2 rows (the default)")
    r.add_argument("--rows", type=Path, help="read rows from this JSON or JSON Lines file instead of Hugging Face")
    r.add_argument("--dataset", default=rebench.DATASET, help=f"the Hugging Face dataset (default {rebench.DATASET})")
    r.add_argument("--offset", type=int, default=0, help="the first row to read from Hugging Face")
    r.add_argument("--language", help="only rows of this language (e.g. python)")
    p.add_argument("--scan", type=int, default=100, help="rows (or, with --git, commits) to read (default 100)")
    p.add_argument("--since", help="only rows (or commits) from this date on (YYYY-MM-DD)")
    p.add_argument("--limit", type=int, default=10, help="tasks to write at most (default 10)")
    p.add_argument("--out", type=Path, default=ROOT / "suite" / "tasks", help="where the task folders go")
    p.add_argument("--notice", type=Path, default=ROOT / "NOTICE", help="the NOTICE file to list licences in")
    p.add_argument("--hf-base", default=rebench.HF_ROWS, help=argparse.SUPPRESS)
    p.add_argument("--files-base", default=rebench.RAW_FILES, help=argparse.SUPPRESS)
    p.add_argument("--api-base", default=rebench.GITHUB_API, help=argparse.SUPPRESS)
    return p


def from_rows(args):
    """(label, build) for each row that passes the filters."""
    rows = read_rows(args.rows) if args.rows else rebench.hf_rows(args.dataset, args.offset, min(args.scan, 100),
                                                                  args.hf_base)
    for row in (r for r in rows if keep(r, args)):
        yield row.get("instance_id"), lambda row=row: rebench.build(row, args.files_base, args.api_base, args.dataset)


def from_history(args):
    """(label, build) for each commit named, or each commit of the history read."""
    options = {"licence": args.license, "max_changed": args.max_lines}
    if args.commit:
        for sha in args.commit:
            yield sha, lambda sha=sha: history.from_commit(args.git, args.repo, sha, **options)
        return
    for c in history.commits(args.git, args.rev, args.scan, args.since):
        yield c.sha[:12], lambda c=c: history.from_commit(args.git, args.repo, c, **options)


def from_picks(args):
    """(label, build) for each pick (only the --repo's when built from a clone)."""
    picks = fetch.read_picks(args.picks)
    for pick in picks:
        if args.git is None or pick.get("repo") == args.repo:
            yield f"{pick.get('repo')}@{str(pick.get('commit'))[:12]}", \
                lambda pick=pick: fetch.from_pick(pick, args.git, args.source)


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.git is not None and not re.fullmatch(r"[\w.-]+/[\w.-]+", args.repo or ""):
        p.error("--git needs --repo OWNER/NAME: the repository's name on GitHub")
    if args.commit and args.git is None:
        p.error("--commit needs --git CLONE")
    source = from_picks if args.picks else from_history if args.git is not None else from_rows
    try:
        items = list(source(args))
    except (OSError, ValueError, history.HistoryError) as e:
        sys.stderr.write(f"Could not read the {'picks' if args.picks else 'history' if args.git else 'rows'}: {e}\n")
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    for label, build in items:
        if len(written) >= args.limit and not (args.picks or args.commit):
            break
        try:
            task = build()
            write(task, args.out)
        except (rebench.RowSkipped, TaskError, history.HistoryError) as e:
            sys.stderr.write(f"skipped {label}: {e}\n")
            continue
        except fetch.Unreachable as e:
            sys.stderr.write(f"{e}\n")
            break
        written.append(task)
        print(f"{task.id}: {task.source['repo']} ({task.source['license']})")
    if args.out.resolve() == starter_dir().resolve():
        shipped = [t for t in load_all(None)[0].values() if t.source.get("kind") == "rebench"]
        update_notice(args.notice, rebench.notice_lines(shipped))
    elif written:
        fetch.write_notice(args.out)          # where each task of another project's code came from, beside them
    sys.stderr.write(f"{plural(len(written), 'task')} written to {args.out}.\n")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
