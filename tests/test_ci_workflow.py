"""The CI workflow for a public CI service: scripts/check.py on Linux, macOS and Windows, Python 3.11 to 3.13."""
from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"


def test_every_os_and_supported_python_runs_the_full_check():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    job = workflow["jobs"]["check"]
    matrix = job["strategy"]["matrix"]
    assert set(matrix["os"]) == {"ubuntu-latest", "macos-latest", "windows-latest"}
    assert matrix["python"] == ["3.11", "3.12", "3.13"]
    assert job["strategy"]["fail-fast"] is False           # one red cell must not hide the others
    runs = [step.get("run") for step in job["steps"]]
    assert "python scripts/check.py" in runs
    setup = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/setup-python"))
    assert setup["with"]["python-version"] == "${{ matrix.python }}"
    assert any(str(s.get("uses", "")).startswith("actions/setup-node") for s in job["steps"])
    assert workflow["permissions"] == {"contents": "read"}


def test_the_matrix_starts_at_the_oldest_python_the_package_supports():
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    matrix = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["check"]["strategy"]["matrix"]
    assert requires == f">={matrix['python'][0]}"
