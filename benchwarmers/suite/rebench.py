"""Real bug fixes as tasks, from SWE-rebench-V2 rows: the file before the fix (fetched at the row's base commit),
the lines the fix touched, and the same file after the fix (the row's patch applied) as the control."""
from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

from .tasks import Task

DATASET = "nebius/SWE-rebench-V2"
HF_ROWS = "https://datasets-server.huggingface.co"
RAW_FILES = "https://raw.githubusercontent.com"
GITHUB_API = "https://api.github.com"
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
NOT_SOURCE = re.compile(r"(^|/)(tests?|testing|docs?|examples?)/|(^|/)test_[^/]*$|_test\.\w+$|\.(md|rst|txt|json|ya?ml|"
                        r"toml|cfg|ini|lock|snap)$", re.I)
WHOLE_FILE, CONTEXT, MAX_FILES = 400, 40, 3
NEEDED = ("instance_id", "repo", "base_commit", "patch")      # the cells a task is built from, whole


class RowSkipped(Exception):
    """A row that cannot become a task; the message says why."""


@dataclass
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: list = field(default_factory=list)       # (" " | "-" | "+", text)


@dataclass
class FilePatch:
    old: str | None
    new: str | None
    hunks: list = field(default_factory=list)


# ---- unified diffs ----------------------------------------------------------------------------------

def parse_patch(patch: str) -> list[FilePatch]:
    files, current, hunk = [], None, None
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            current, hunk = FilePatch(None, None), None
            files.append(current)
        elif line.startswith("--- ") and current is not None and hunk is None:
            current.old = strip_prefix(line[4:])
        elif line.startswith("+++ ") and current is not None and hunk is None:
            current.new = strip_prefix(line[4:])
        elif line.startswith("@@") and current is not None:
            m = HUNK.match(line)
            if not m:
                raise RowSkipped(f"a hunk header cannot be read: {line[:60]!r}")
            a, b, c, d = m.groups()
            hunk = Hunk(int(a), int(b if b is not None else 1), int(c), int(d if d is not None else 1))
            current.hunks.append(hunk)
        elif hunk is not None and line[:1] in (" ", "-", "+"):
            hunk.lines.append((line[0], line[1:]))
        elif hunk is not None and line == "":
            hunk.lines.append((" ", ""))
    return files


def strip_prefix(name: str) -> str | None:
    name = name.split("\t")[0].strip()
    if name == "/dev/null":
        return None
    return name[2:] if name[:2] in ("a/", "b/") else name


def apply(before: str, fp: FilePatch) -> str:
    """The file after the patch; refuses when the context does not match the file it was fetched as."""
    old = before.splitlines()
    out, at = [], 0
    for h in fp.hunks:
        start = h.old_start - 1 if h.old_len else h.old_start
        if start < at:
            raise RowSkipped(f"{fp.old}: hunks overlap")
        out += old[at:start]
        at = start
        for sign, text in h.lines:
            if sign in " -":
                if at >= len(old) or old[at] != text:
                    raise RowSkipped(f"{fp.old}: the patch does not fit the file at line {at + 1}")
                at += 1
            if sign in " +":
                out.append(text)
    out += old[at:]
    return "\n".join(out) + ("\n" if before.endswith("\n") or not before else "")


def touched(fp: FilePatch) -> list[list[int]]:
    """Line ranges of the old file the fix changed; an insertion is pointed at by the lines around it."""
    marks = set()
    for h in fp.hunks:
        line = h.old_start if h.old_len else h.old_start + 1
        replacing = False                          # a '+' right after '-' lines replaces them: nothing more to mark
        for sign, _ in h.lines:
            if sign == "-":
                marks.add(line)
            elif sign == "+" and not replacing:
                marks.update((max(1, line - 1), line))
            replacing = sign != " " and (sign == "-" or replacing)
            if sign in " -":
                line += 1
    return ranges(sorted(marks))


def ranges(nums: list) -> list[list[int]]:
    out: list[list[int]] = []
    for n in nums:
        if out and n <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], n)
        else:
            out.append([n, n])
    return out


def shift(fp: FilePatch, line: int) -> int:
    """Where an unchanged old line (outside every hunk) stands in the new file."""
    return line + sum(h.new_len - h.old_len for h in fp.hunks if h.old_start + max(h.old_len, 1) - 1 < line)


def window(before: str, after: str, fp: FilePatch, marks: list) -> tuple:
    """(old excerpt, new excerpt, key in excerpt lines, [first, last] old lines): a small file whole, a large
    one cut to the changed hunks with some context."""
    old, new = before.splitlines(), after.splitlines()
    marks = [[a, min(b, len(old))] for a, b in marks if a <= len(old)]
    if len(old) <= WHOLE_FILE:
        return before, after, marks, [1, len(old)]
    first = max(1, min(h.old_start for h in fp.hunks) - CONTEXT)
    last = min(len(old), max(h.old_start + h.old_len for h in fp.hunks) + CONTEXT)
    nfirst, nlast = shift(fp, first), shift(fp, last)
    key = [[max(a, first) - first + 1, min(b, last) - first + 1] for a, b in marks]
    return ("\n".join(old[first - 1:last]) + "\n", "\n".join(new[nfirst - 1:nlast]) + "\n", key, [first, last])


# ---- rows and files -------------------------------------------------------------------------------------

def fetch(url: str, timeout: float = 60) -> bytes:
    req = urllib.request.Request(url, headers={"User-Agent": "benchwarmers-rebench"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.read()


def hf_rows(dataset: str = DATASET, offset: int = 0, length: int = 100, base: str = HF_ROWS,
            split: str = "train", config: str = "default") -> list[dict]:
    """Rows of a Hugging Face dataset through the datasets-server /rows API (at most 100 per page). The API cuts
    long cells when a page is too big and names them in `truncated_cells`: a row whose needed cell was cut is
    asked for again alone; if it still comes cut, it keeps that list so build() skips it with the reason."""
    rows = []
    for item in rows_page(dataset, offset, length, base, split, config):
        if cut(item) and length > 1 and isinstance(item.get("row_idx"), int):
            try:
                item = (rows_page(dataset, item["row_idx"], 1, base, split, config) or [item])[0]
            except (OSError, ValueError):
                pass                   # kept cut: skipped with its reason rather than ending the run
        row = dict(item.get("row", item))
        if cut(item):
            row["truncated_cells"] = cut(item)
        rows.append(row)
    return rows


def rows_page(dataset: str, offset: int, length: int, base: str, split: str, config: str) -> list[dict]:
    query = urllib.parse.urlencode({"dataset": dataset, "config": config, "split": split, "offset": offset,
                                    "length": length})
    data = json.loads(fetch(f"{base}/rows?{query}"))
    return [r for r in data.get("rows", []) if isinstance(r, dict)]


def cut(item: dict) -> list[str]:
    """The cells build() needs that the rows API cut short in this item (or row)."""
    return [c for c in item.get("truncated_cells") or [] if c in NEEDED]


def licence(repo: str, base: str = GITHUB_API) -> str | None:
    """The repository's SPDX licence id from GitHub's licence API, or None when it names none (a 404, or no SPDX
    id). Any other failure, such as the unauthenticated rate limit's 403, is not an answer: RowSkipped says so."""
    try:
        data = json.loads(fetch(f"{base}/repos/{repo}/license"))
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise RowSkipped(f"GitHub's licence API answered {e.code} for {repo} ({api_message(e)}), so its licence "
                         "is unknown; try again later") from None
    except (OSError, ValueError) as e:
        raise RowSkipped(f"GitHub's licence API could not be read for {repo} ({e}), so its licence is unknown; try "
                         "again later") from None
    spdx = (((data.get("license") if isinstance(data, dict) else None) or {}).get("spdx_id") or "").strip()
    return spdx if spdx and spdx != "NOASSERTION" else None


def api_message(error: urllib.error.HTTPError) -> str:
    """GitHub's own words for a refusal (`message`), or the status's reason."""
    try:
        return str(json.loads(error.read(4096)).get("message") or error.reason)[:200]
    except (OSError, ValueError, AttributeError):
        return str(error.reason)


def task_id(instance_id: str) -> str:
    return "rebench-" + re.sub(r"[^a-z0-9._-]+", "-", instance_id.lower()).strip("-")[:100]


def build(row: dict, files_base: str = RAW_FILES, api_base: str = GITHUB_API, dataset: str = DATASET) -> Task:
    """One task from one row; RowSkipped says why a row cannot be one."""
    for name in NEEDED:
        if not isinstance(row.get(name), str) or not row[name]:
            raise RowSkipped(f"the row has no {name}")
    if cut(row):
        raise RowSkipped("the rows API sent its " + ", ".join(cut(row)) + " cut short (truncated_cells), so the "
                         "fix cannot be read whole")
    patches = [fp for fp in parse_patch(row["patch"]) if fp.old and fp.new and not NOT_SOURCE.search(fp.old)]
    if not patches:
        raise RowSkipped("the fix changes no existing source file")
    if len(patches) > MAX_FILES:
        raise RowSkipped(f"the fix spans {len(patches)} files (at most {MAX_FILES})")
    spdx = licence(row["repo"], api_base)
    if spdx is None:
        raise RowSkipped(f"{row['repo']} names no licence, so its code cannot be shipped")
    files, control, key, excerpts = {}, {}, {}, {}
    for fp in patches:
        try:
            before = fetch(f"{files_base}/{row['repo']}/{row['base_commit']}/{fp.old}").decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise RowSkipped(f"{fp.old} could not be fetched at {row['base_commit'][:12]}: {e}") from None
        after = apply(before, fp)
        files[fp.old], control[fp.old], key[fp.old], excerpts[fp.old] = window(before, after, fp, touched(fp))
    return Task(id=task_id(row["instance_id"]), kind="bug",
                question=f"This code is from {row['repo']}. Review it: does it hold a bug? If it does, say which "
                         "lines hold it.",
                files=files, control=control, answer={"lines": key},
                source={"kind": "rebench", "dataset": dataset, "instance_id": row["instance_id"], "repo": row["repo"],
                        "url": f"https://github.com/{row['repo']}", "base_commit": row["base_commit"],
                        "created_at": row.get("created_at"), "language": row.get("language"), "license": spdx,
                        "excerpt": excerpts})


def notice_lines(tasks: list[Task]) -> list[str]:
    """One NOTICE line per task: where its code comes from and under which licence."""
    return [notice_line(t) for t in sorted(tasks, key=lambda t: t.id)]


def notice_line(t: Task) -> str:
    s = t.source
    if s.get("instance_id"):
        origin = f"SWE-rebench-V2 instance {s['instance_id']}"
    else:
        origin = f"{s.get('path')}, before fix {s.get('commit')}"
    return (f"- suite/tasks/{t.id}: code from {s['url']} at commit {s['base_commit']} ({origin}), "
            f"licensed {s['license']}.")
