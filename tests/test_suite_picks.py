"""The picks file of real fixes (benchwarmers/suite/data/rebench-picks.json, shipped in the package): enough fixes,
from enough projects of different kinds, each a fix of one source file under a licence that allows shipping it,
with the sha256 of its two file versions, and the docs say what it holds."""
from __future__ import annotations

import json
import re
from pathlib import Path

from benchwarmers.suite import fetch, history

ROOT = Path(__file__).resolve().parent.parent
PICKS = json.loads(fetch.PICKS.read_text(encoding="utf-8"))["picks"]
PERMISSIVE = {"MIT", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "PSF-2.0", "ISC"}
SHA = re.compile(r"[0-9a-f]{40}")


def test_the_picks_are_enough_fixes_from_enough_kinds_of_project():
    repos = {p["repo"] for p in PICKS}
    assert len(PICKS) >= 24 and len(repos) >= 10
    assert {"parser", "numerics", "cli", "web", "data structures"} <= {p["area"] for p in PICKS}
    assert len({p["commit"] for p in PICKS}) == len(PICKS)                       # no fix picked twice


def test_each_pick_is_a_fix_of_one_source_file_under_a_permissive_licence():
    for p in PICKS:
        label = f"{p.get('repo')}@{p.get('commit')}"
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", p["repo"]), label
        assert SHA.fullmatch(p["commit"]) and SHA.fullmatch(p["base_commit"]) and p["commit"] != p["base_commit"]
        assert history.is_source(p["path"]), label                               # not a test, docs or config
        assert set(p["license"].split(" AND ")) <= PERMISSIVE, label
        assert p["message"] and p["evidence"][0].startswith("its message says it fixes"), label   # a bug or an issue
        assert fetch.problem(p) is None, label                # ids, a safe path and both sha256: what a fetch needs
        assert p["bytes_before"] > 0 and p["bytes_after"] > 0, label


def test_the_picks_name_ids_and_hashes_never_code():
    allowed = set(fetch.NEEDED) | set(fetch.KEPT) | set(history.PICK_FIELDS)
    for p in PICKS:
        assert set(p) <= allowed, set(p) - allowed
        assert all(len(str(v)) < 300 for v in p.values())
    assert fetch.read_picks() == PICKS                                   # the file a fetch reads by default


def flat(name: str) -> str:
    return " ".join((ROOT / name).read_text(encoding="utf-8").split())


def test_the_docs_count_and_list_the_picks_as_the_file_holds_them():
    fixes, projects = len(PICKS), len({p["repo"] for p in PICKS})
    for name in ("README.md", "BENCHMARKS.md", "NOTICE", "CHANGELOG.md", "suite/README.md", "suite/REBENCH.md"):
        said = re.findall(r"(\d+) fixes (?:from|of) (\d+) (?:permissive )?(?:Python )?projects", flat(name))
        assert said, f"{name} no longer says how many fixes the picks hold: update this test"
        assert {(int(a), int(b)) for a, b in said} == {(fixes, projects)}, name
    table = [line for line in (ROOT / "suite" / "REBENCH.md").read_text(encoding="utf-8").splitlines()
             if line.startswith("| ") and "](https://github.com/" in line]
    listed = {(re.search(r"\[([^]]+)\]", row).group(1), re.search(r"`([0-9a-f]{10})`", row).group(1)) for row in table}
    assert listed == {(p["repo"], p["commit"][:10]) for p in PICKS}
    for p in PICKS:
        (row,) = [r for r in table if p["commit"][:10] in r]
        assert f"| {p['area']} |" in row and p["path"] in row and row.rstrip(" |").endswith(p["license"]), row
