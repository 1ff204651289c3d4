"""python suite/seed.py --repo NAME: plant bugs in real functions of your repo (NAME from the data folder's
config/repos.json), each task with its clean control, written into the data folder's suite/tasks. A bug is kept
only when the repo's tests fail on it (or, without tests, its operator's check shows it changes behaviour)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchwarmers import home  # noqa: E402
from benchwarmers.errors import BenchError  # noqa: E402
from benchwarmers.suite.seed import DEFAULT_DEADLINE, report_lines, seed_repo  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python suite/seed.py", description=__doc__,
                                     epilog="example:\n  python suite/seed.py --repo myapp --count 10",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", required=True, help="the repo's name in config/repos.json")
    parser.add_argument("--count", type=int, default=20, help="how many tasks at most (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="picks other functions and bugs (default 0)")
    parser.add_argument("--deadline", type=int, default=DEFAULT_DEADLINE, metavar="SECONDS",
                        help=f"stop after this long, keeping what was made (default {DEFAULT_DEADLINE})")
    parser.add_argument("--home", help="the data folder (default: the one Benchwarmers uses)")
    args = parser.parse_args(argv)
    folder = home.ensure(Path(args.home).expanduser() if args.home else None)
    try:
        done = seed_repo(folder, args.repo, args.count, args.seed, args.deadline)
    except BenchError as e:
        sys.stderr.write(f"{e}\n")
        return 1
    lines, summary = report_lines(done)
    for line in lines:
        print(line)
    sys.stderr.write(summary + "\n")
    if done["stopped"]:
        sys.stderr.write(f"Stopped {done['stopped']}; run it again to go on.\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
