"""python suite/rebench.py: build real-bug tasks from SWE-rebench-V2 rows (the file before the fix, the lines the
fix touched, the file after the fix as the control), into suite/tasks or another folder. It downloads the rows
from Hugging Face and the files from GitHub; see suite/REBENCH.md."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchwarmers.suite import rebench  # noqa: E402
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python suite/rebench.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="examples:\n  python suite/rebench.py --limit 10 --language python --since "
                                       "2025-06-01\n  python suite/rebench.py --rows rows.jsonl --out /tmp/tasks")
    p.add_argument("--rows", type=Path, help="read rows from this JSON or JSON Lines file instead of Hugging Face")
    p.add_argument("--dataset", default=rebench.DATASET, help=f"the Hugging Face dataset (default {rebench.DATASET})")
    p.add_argument("--offset", type=int, default=0, help="the first row to read from Hugging Face")
    p.add_argument("--scan", type=int, default=100, help="rows to read from Hugging Face (default 100)")
    p.add_argument("--limit", type=int, default=10, help="tasks to write at most (default 10)")
    p.add_argument("--language", help="only rows of this language (e.g. python)")
    p.add_argument("--since", help="only rows created on or after this date (YYYY-MM-DD)")
    p.add_argument("--out", type=Path, default=ROOT / "suite" / "tasks", help="where the task folders go")
    p.add_argument("--notice", type=Path, default=ROOT / "NOTICE", help="the NOTICE file to list licences in")
    p.add_argument("--hf-base", default=rebench.HF_ROWS, help=argparse.SUPPRESS)
    p.add_argument("--files-base", default=rebench.RAW_FILES, help=argparse.SUPPRESS)
    p.add_argument("--api-base", default=rebench.GITHUB_API, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    try:
        rows = read_rows(args.rows) if args.rows else rebench.hf_rows(args.dataset, args.offset, min(args.scan, 100),
                                                                      args.hf_base)
    except (OSError, ValueError) as e:
        sys.stderr.write(f"Could not read the rows: {e}\n")
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    for row in (r for r in rows if keep(r, args)):
        if len(written) >= args.limit:
            break
        try:
            task = rebench.build(row, args.files_base, args.api_base, args.dataset)
            write(task, args.out)
        except (rebench.RowSkipped, TaskError) as e:
            sys.stderr.write(f"skipped {row.get('instance_id')}: {e}\n")
            continue
        written.append(task)
        print(f"{task.id}: {task.source['repo']} ({task.source['license']})")
    if args.out.resolve() == starter_dir().resolve():
        shipped = [t for t in load_all(None)[0].values() if t.source.get("kind") == "rebench"]
        update_notice(args.notice, rebench.notice_lines(shipped))
    sys.stderr.write(f"{plural(len(written), 'task')} written to {args.out}.\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
