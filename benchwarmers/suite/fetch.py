"""Real bugs on request: the fixes a picks file names (the shipped benchwarmers/suite/data/rebench-picks.json, or
one of the user's) built into a task folder, the data folder's suite/tasks for `bench suite fetch`. Each fix's two
file versions are downloaded on this machine, from the forge's raw files or a mirror laid out like them
(OWNER/NAME/COMMIT/PATH), or read from a folder of such files or of clones; each is checked against the pick's
sha256 before it is used. Benchwarmers ships the picks, never the code."""
from __future__ import annotations

import hashlib
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable

from ..store.config import replace
from ..words import plural
from . import history, rebench
from .rebench import RowSkipped
from .tasks import TASK_FILE, Task, TaskError, safe_path, write

PICKS = Path(__file__).resolve().parent / "data" / "rebench-picks.json"
FORGE = rebench.RAW_FILES
NEEDED = ("repo", "commit", "base_commit", "path", "license", "sha256_before", "sha256_after")
KEPT = ("date", "message", "evidence", "pull", "area")          # the pick's words the task's source keeps
COMMIT, SHA256, NAME = re.compile(r"[0-9a-f]{40}"), re.compile(r"[0-9a-f]{64}"), re.compile(r"[A-Za-z0-9_.-]+")
MAX_PICKS, SECONDS = 1_000, 30
NOTICE = "NOTICE"
NOTICE_HEAD = ("The rebench-* task folders here hold code of other projects, downloaded on this machine by `bench "
               "suite fetch` (or suite/rebench.py) from the picks of real fixes; Benchwarmers does not ship it. Each "
               "stays under its own project's licence:")
Reader = Callable[[str, str, str], bytes]          # (OWNER/NAME, commit, path) -> the file's bytes
_test_picks: Path | None = None
_test_forge: str | None = None


class Unreachable(Exception):
    """The forge or mirror does not answer at all: the fetch stops, keeping what it wrote."""


# ---- the picks ------------------------------------------------------------------------------------------

def use_for_tests(picks: Path | None, forge: str | None = None) -> None:
    """Tests only: the shipped picks and the forge stand replaced by a picks file and a server on this machine
    (None undoes it), so the Suite page's button can be clicked without another project's code. Only
    http://127.0.0.1:PORT is taken for the forge; nothing in config, the API or the command line reaches this."""
    global _test_picks, _test_forge
    if forge is not None and not re.fullmatch(r"http://127\.0\.0\.1:\d+", forge):
        raise ValueError(f"the fetch test hook takes http://127.0.0.1:PORT only, not {forge!r}")
    _test_picks, _test_forge = (Path(picks) if picks else None), forge


def forge() -> str:
    """Where files are downloaded from when no source is given: GitHub's raw files."""
    return _test_forge or FORGE


def read_picks(path: Path | None = None) -> list[dict]:
    """The picks of a file, the shipped one by default; ValueError says what is wrong with it."""
    path = Path(path) if path else (_test_picks or PICKS)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"{path} cannot be read ({e.strerror or e}).") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path} is not JSON ({e}).") from None
    return picks_of(data, str(path))


def picks_of(data, where: str = "the picks") -> list[dict]:
    """The list under "picks", each pick checked (ValueError names the first few that are wrong)."""
    picks = data.get("picks") if isinstance(data, dict) else None
    if not isinstance(picks, list) or not picks:
        raise ValueError(f'{where} must hold {{"picks": [...]}}, a list of fixes.')
    if len(picks) > MAX_PICKS:
        raise ValueError(f"{where} holds {len(picks):,} picks; at most {MAX_PICKS:,} are read.")
    wrong = [f"pick {n} ({str(p.get('repo') if isinstance(p, dict) else p)[:60]}): {why}"
             for n, p in enumerate(picks, 1) if (why := problem(p))]
    if wrong:
        raise ValueError(f"{where}: " + "; ".join(wrong[:5]) + (f"; and {len(wrong) - 5} more" if len(wrong) > 5
                                                                 else "") + ".")
    return picks


def problem(pick, hashes: bool = True) -> str | None:
    """What makes a pick unusable, or None. A pick is named by ids alone; one to download says what its files hash
    to (`hashes`; one built from a clone is checked against the clone instead)."""
    if not isinstance(pick, dict):
        return "not an object"
    missing = [k for k in NEEDED if (hashes or not k.startswith("sha256_")) and
               (not isinstance(pick.get(k), str) or not pick[k])]
    if missing:
        return "it has no " + ", ".join(missing)
    parts = pick["repo"].split("/")
    if len(parts) != 2 or not all(NAME.fullmatch(p) and p.strip(".") for p in parts):
        return "repo must be OWNER/NAME"
    if not COMMIT.fullmatch(pick["commit"]) or not COMMIT.fullmatch(pick["base_commit"]):
        return "commit and base_commit must be 40 lower-case hex digits"
    path = pick["path"]
    if not safe_path(path) or any(p in ("", ".") for p in path.split("/")) or not history.is_source(path):
        return f"path {path[:80]!r} must name a Python source file inside the repository"
    if hashes and not (SHA256.fullmatch(pick["sha256_before"]) and SHA256.fullmatch(pick["sha256_after"])):
        return "sha256_before and sha256_after must be 64 lower-case hex digits"
    return None


def task_id(pick: dict) -> str:
    return history.task_id(pick["repo"], pick["commit"])


def plan(picks: list[dict], root: Path) -> dict:
    """What a fetch into `root` would do: each fix (repository, commits, path, licence, bytes to download, whether
    its task is there already) and the totals."""
    fixes = [{"id": task_id(p), "repo": p["repo"], "commit": p["commit"], "base_commit": p["base_commit"],
              "path": p["path"], "license": p["license"], "area": p.get("area"), "bytes": size(p),
              "present": (Path(root) / task_id(p)).is_dir()} for p in picks]
    missing = [f for f in fixes if not f["present"]]
    return {"fixes": fixes, "total": len(fixes), "repositories": len({f["repo"] for f in fixes}),
            "present": len(fixes) - len(missing), "missing": len(missing),
            "missing_repositories": len({f["repo"] for f in missing}),
            "bytes": sum(f["bytes"] or 0 for f in missing)}


def size(pick: dict) -> int | None:
    sizes: list = [pick.get("bytes_before"), pick.get("bytes_after")]
    return sum(sizes) if all(isinstance(n, int) and not isinstance(n, bool) for n in sizes) else None


# ---- where the files come from ------------------------------------------------------------------------

def reader(source: str | None) -> Reader:
    """How files are read: the forge's raw files (no source), an http(s) mirror with the same layout, or a folder
    (a path or file:// URL) holding OWNER/NAME/COMMIT/PATH files or clones at OWNER/NAME. ValueError: neither."""
    if not source:
        return from_web(forge())
    if re.match(r"https?://", source, re.I):
        parts = urllib.parse.urlsplit(source)
        if not parts.hostname or parts.query or parts.fragment:
            raise ValueError(f"{source[:120]!r} is not a base URL (scheme, host and path only).")
        return from_web(source.rstrip("/"))
    folder = Path(urllib.request.url2pathname(source[7:]) if source.lower().startswith("file://") else source)
    folder = folder.expanduser()
    if not folder.is_dir():
        raise ValueError(f"{source[:120]!r} is neither an http(s) URL nor a folder here.")
    return from_folder(folder)


def from_web(base: str) -> Reader:
    def get(repo: str, sha: str, path: str) -> bytes:
        url = f"{base}/{repo}/{sha}/{urllib.parse.quote(path)}"
        try:
            req = urllib.request.Request(url, headers={"User-Agent": "benchwarmers-fetch"})
            with urllib.request.urlopen(req, timeout=SECONDS) as resp:
                data = resp.read(history.MAX_FILE_BYTES + 1)
        except urllib.error.HTTPError as e:          # it answered: this file is not to be had there
            raise RowSkipped(f"{url} answered {e.code} {e.reason}") from None
        except (urllib.error.URLError, OSError) as e:   # no answer at all: DNS, refused, timed out
            raise Unreachable(unreachable(base, url, getattr(e, "reason", None) or e)) from None
        if len(data) > history.MAX_FILE_BYTES:
            raise RowSkipped(f"{url} is over {history.MAX_FILE_BYTES:,} bytes")
        return data
    return get


def from_folder(folder: Path) -> Reader:
    def get(repo: str, sha: str, path: str) -> bytes:
        raw = folder.joinpath(*repo.split("/"), sha, *path.split("/"))
        if raw.is_file():
            if raw.stat().st_size > history.MAX_FILE_BYTES:
                raise RowSkipped(f"{raw} is over {history.MAX_FILE_BYTES:,} bytes")
            return raw.read_bytes()
        clone = folder.joinpath(*repo.split("/"))
        if (clone / ".git").exists() or (clone / "objects").is_dir():
            try:
                return history.git_bytes(clone, "show", f"{sha}:{path}")
            except history.HistoryError as e:
                raise RowSkipped(str(e)) from None
        raise RowSkipped(f"neither {raw} nor a clone at {clone} is there")
    return get


def unreachable(base: str, url: str, why) -> str:
    return (f"Could not reach {base} (tried {url}: {why}). Behind a proxy, set HTTPS_PROXY for the service; or "
            "fetch from a mirror laid out as OWNER/NAME/COMMIT/PATH (--source URL), or from a folder of such files "
            "or of clones (git clone https://github.com/OWNER/NAME FOLDER/OWNER/NAME, then --source FOLDER).")


# ---- building -----------------------------------------------------------------------------------------

def build(pick: dict, get: Reader) -> Task:
    """The task of one pick from its two downloaded versions, each checked against the pick's sha256."""
    texts = {}
    for sha, want in ((pick["base_commit"], pick["sha256_before"]), (pick["commit"], pick["sha256_after"])):
        data = get(pick["repo"], sha, pick["path"])
        got = hashlib.sha256(data).hexdigest()
        if got != want:
            raise RowSkipped(f"{pick['path']} at {sha[:12]} is not the file picked (its sha256 is {got[:16]}..., the "
                             f"pick's {want[:16]}...): refused")
        try:
            texts[sha] = data.decode("utf-8")
        except UnicodeDecodeError:
            raise RowSkipped(f"{pick['path']} at {sha[:12]} is not UTF-8 text") from None
    return history.from_versions(pick["repo"], pick["commit"], pick["base_commit"], pick["path"],
                                 texts[pick["base_commit"]], texts[pick["commit"]], pick["license"],
                                 {k: pick[k] for k in KEPT if k in pick})


def from_pick(pick: dict, clone: Path | None = None, source: str | None = None) -> Task:
    """One pick's task: from a clone's history (checked against the pick), else downloaded from `source`."""
    why = problem(pick, hashes=clone is None)
    if why:
        raise RowSkipped(f"the pick cannot be built: {why}")
    if clone is None:
        return build(pick, reader(source))
    task = history.from_commit(clone, pick["repo"], pick["commit"])
    differs = [k for k in ("commit", "base_commit", "path", "license", "sha256_before", "sha256_after")
               if k in pick and task.source.get(k) != pick[k]]
    if differs:
        raise RowSkipped(f"the clone's {', '.join(differs)} differ from the pick's")
    task.source.update({k: pick[k] for k in KEPT if k in pick})
    return task


def fetch(picks: list[dict], root: Path, get: Reader, progress: Callable[[dict], None] | None = None,
          stopping=None) -> dict:
    """Build into `root` each pick whose task is not there; every task is written whole or not at all, so a fetch
    cut short resumes where it stopped. A fix that cannot be had or differs is skipped with the reason; a source
    that does not answer stops the fetch (`unreachable`)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"total": len(picks), "done": 0, "written": [], "present": [], "skipped": [],
                              "unreachable": None, "stopped": False, "folder": str(root)}
    for pick in picks:
        if stopping is not None and stopping.is_set():
            report["stopped"] = True
            break
        entry = {"id": task_id(pick), "repo": pick["repo"], "commit": pick["commit"], "license": pick["license"]}
        try:
            if (root / entry["id"]).is_dir():
                report["present"].append(entry)
            else:
                write(build(pick, get), root)
                report["written"].append(entry)
                write_notice(root)
        except Unreachable as e:
            report["unreachable"] = str(e)
            break
        except (RowSkipped, TaskError) as e:
            report["skipped"].append(dict(entry, why=str(e)))
        report["done"] += 1
        if progress:
            progress(report)
    write_notice(root)
    return report


def outcome(report: dict) -> str:
    """The fetch's result in one sentence."""
    parts = [f"{plural(len(report['written']), 'task')} written"]
    if report["present"]:
        parts.append(f"{len(report['present'])} already there")
    if report["skipped"]:
        parts.append(f"{len(report['skipped'])} skipped")
    left = report["total"] - report["done"]
    if left and (report["unreachable"] or report["stopped"]):
        parts.append(f"{left} not tried")
    return ", ".join(parts) + f" in {report['folder']}."


def report_lines(report: dict) -> list[str]:
    """One line per fix written or skipped."""
    return [f"{t['id']}: {t['repo']} ({t['license']})" for t in report["written"]] + \
        [f"skipped {t['repo']}@{t['commit'][:10]}: {t['why']}" for t in report["skipped"]]


# ---- NOTICE -------------------------------------------------------------------------------------------

def write_notice(root: Path) -> None:
    """NOTICE in the task folder: where each rebench task there came from, under which licence (replaced whole)."""
    lines = []
    for meta in sorted(rebench_sources(root), key=lambda m: m["id"]):
        s = meta["source"]
        lines.append(f"- {meta['id']}: {s.get('path')} from {s.get('url')} at commit {s.get('base_commit')} (before "
                     f"fix {s.get('commit')}), licensed {s.get('license')}.")
    path = Path(root) / NOTICE
    if not lines:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_name(f".{NOTICE}.{os.getpid()}.tmp")
    try:
        tmp.write_text("\n".join([NOTICE_HEAD, "", *lines]) + "\n", encoding="utf-8", newline="\n")
        replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def rebench_sources(root: Path) -> list[dict]:
    """The task.json of each rebench task folder in `root` (one that cannot be read is left out)."""
    found = []
    for meta_file in Path(root).glob(f"rebench-*/{TASK_FILE}"):
        try:
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict) and isinstance(meta.get("source"), dict) and meta.get("id"):
            found.append(meta)
    return found
