"""scripts/release.py: the versions stay in step, bump dates the changelog, dist gives the files with SHA256SUMS."""
from __future__ import annotations

import datetime
import hashlib
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import benchwarmers
from tests.helpers.install import NPM, clean_env, copy_source, run

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "release.py"
VERSION_FILES = ("benchwarmers/__init__.py", "package.json", ".claude-plugin/marketplace.json",
                 "plugins/benchwarmers/.claude-plugin/plugin.json", "CHANGELOG.md")


def load_release():
    spec = importlib.util.spec_from_file_location("release_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


release = load_release()


@pytest.fixture
def tree(tmp_path) -> Path:
    """The files that carry the version, copied into a tree of their own."""
    for name in VERSION_FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tmp_path / name)
    return tmp_path


def script(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run([sys.executable, SCRIPT], *args, env=clean_env(), cwd=cwd, timeout=600)


def test_this_checkout_keeps_every_version_in_step(tmp_path):
    out = script("check", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"version {benchwarmers.__version__} is the same everywhere" in out.stdout
    assert set(release.all_versions(ROOT).values()) == {benchwarmers.__version__}


def test_bump_writes_every_copy_and_dates_the_unreleased_notes(tree):
    before = {name: (tree / name).read_text(encoding="utf-8") for name in VERSION_FILES}
    release.bump(tree, "9.8.7", today=datetime.date(2031, 2, 3))
    assert set(release.all_versions(tree).values()) == {"9.8.7"}
    changelog = (tree / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## Unreleased\n\n## 9.8.7 - 2031-02-03\n" in changelog
    assert release.check(tree, released=True) == "9.8.7"
    for name in VERSION_FILES[1:4]:             # JSON files keep their layout: only version lines change
        old, new = before[name].splitlines(), (tree / name).read_text(encoding="utf-8").splitlines()
        assert len(old) == len(new)
        assert all(a == b or '"version"' in b for a, b in zip(old, new)), name


def test_check_names_the_copy_that_disagrees(tree):
    path = tree / "plugins/benchwarmers/.claude-plugin/plugin.json"
    path.write_text(path.read_text(encoding="utf-8").replace(benchwarmers.__version__, "0.0.9"), encoding="utf-8")
    out = script("--root", str(tree), "check", cwd=tree)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "plugin.json:version says 0.0.9" in out.stderr and "release.py bump" in out.stderr


@pytest.mark.parametrize("args, message", [
    (["bump", "1.2"], "is not a version like 1.2.3"),
    (["check", "--released"], "no dated section"),
])
def test_bad_requests_are_refused_with_what_to_do(tree, args, message):
    out = script("--root", str(tree), *args, cwd=tree)
    assert out.returncode == 1 and message in out.stderr and "Traceback" not in out.stderr


def test_a_missing_changelog_is_a_clear_error(tree):
    (tree / "CHANGELOG.md").unlink()
    out = script("--root", str(tree), "check", cwd=tree)
    assert out.returncode == 1 and "cannot read" in out.stderr and "CHANGELOG.md" in out.stderr


def test_checksums_are_in_the_format_sha256sum_checks(tmp_path):
    (tmp_path / "a.whl").write_bytes(b"wheel bytes")
    (tmp_path / "b.tgz").write_bytes(b"")
    sums = release.write_checksums(tmp_path).read_text(encoding="utf-8").splitlines()
    assert sums == [f"{hashlib.sha256(b'wheel bytes').hexdigest()}  a.whl",
                    f"{hashlib.sha256(b'').hexdigest()}  b.tgz"]


@pytest.mark.slow
@pytest.mark.skipif(not NPM, reason="npm is not installed")
def test_dist_builds_the_three_packages_and_their_checksums(tmp_path):
    source = copy_source(tmp_path / "src")
    version = benchwarmers.__version__
    release.bump(source, version)               # a release needs its dated changelog section
    out = script("--root", str(source), "dist", "--out", str(tmp_path / "dist"), cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    files = {p.name: p for p in (tmp_path / "dist").iterdir()}
    assert set(files) == {f"benchwarmers-{version}.tar.gz", f"benchwarmers-{version}-py3-none-any.whl",
                          f"wendellresearch-ai-benchwarmers-{version}.tgz", "SHA256SUMS"}
    for line in files["SHA256SUMS"].read_text(encoding="utf-8").splitlines():
        digest, name = line.split("  ")
        assert hashlib.sha256(files[name].read_bytes()).hexdigest() == digest
    again = script("--root", str(source), "dist", "--out", str(tmp_path / "dist"), cwd=tmp_path)
    assert again.returncode == 1 and "is not empty" in again.stderr
