"""python scripts/release.py check|bump X.Y.Z|dist: keep every version in step, date the changelog, build with checksums."""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$")
INIT = "benchwarmers/__init__.py"
VERSION_LINE = re.compile(r'^__version__ = "([^"]+)"$', re.M)
UNRELEASED = "## Unreleased"
JSON_VERSION = re.compile(r'("version"\s*:\s*")[^"]*"')


class ReleaseError(Exception):
    """A problem the release cannot go on with; the message says what to fix."""


# ---- where the version is written ---------------------------------------------------------------

def json_versions(root: Path) -> dict[str, tuple[Path, list]]:
    """Each JSON copy of the version: file -> (path, key paths to it). __init__.py is the source of truth."""
    return {"package.json": (root / "package.json", [["version"]]),
            ".claude-plugin/marketplace.json": (root / ".claude-plugin" / "marketplace.json",
                                                [["metadata", "version"], ["plugins", 0, "version"]]),
            "plugins/benchwarmers/.claude-plugin/plugin.json": (
                root / "plugins" / "benchwarmers" / ".claude-plugin" / "plugin.json", [["version"]])}


def read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise ReleaseError(f"cannot read {path}: {e.strerror or e}.") from None


def read_json(path: Path):
    try:
        return json.loads(read(path))
    except ValueError as e:
        raise ReleaseError(f"{path} is not valid JSON: {e}.") from None


def dig(data, keys: list):
    for key in keys:
        data = data[key]
    return data


def source_version(root: Path) -> str:
    found = VERSION_LINE.search(read(root / INIT))
    if not found:
        raise ReleaseError(f"{INIT} has no line __version__ = \"X.Y.Z\".")
    return found.group(1)


def all_versions(root: Path) -> dict[str, str]:
    out = {INIT: source_version(root)}
    for name, (path, key_paths) in json_versions(root).items():
        data = read_json(path)
        for keys in key_paths:
            where = name + ":" + ".".join(str(k) for k in keys)
            try:
                out[where] = dig(data, keys)
            except (KeyError, IndexError, TypeError):
                raise ReleaseError(f"{where} is missing: that file should carry the version there.") from None
    return out


def write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    os.replace(tmp, path)


# ---- the commands -------------------------------------------------------------------------------

def check(root: Path, released: bool = False) -> str:
    """Every copy of the version matches __init__.py, and CHANGELOG.md has its section (dated, if `released`)."""
    versions = all_versions(root)
    version = versions[INIT]
    wrong = [f"{where} says {found}" for where, found in versions.items() if found != version]
    if wrong:
        raise ReleaseError(f"{INIT} says {version}, but " + "; ".join(wrong)
                           + f". Run: python scripts/release.py bump {version}")
    changelog = read(root / "CHANGELOG.md")
    dated = re.search(rf"^## {re.escape(version)} - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.M)
    if released and not dated:
        raise ReleaseError(f"CHANGELOG.md has no dated section '## {version} - YYYY-MM-DD'. "
                           f"Run: python scripts/release.py bump {version}")
    if not dated and UNRELEASED not in changelog.splitlines():
        raise ReleaseError(f"CHANGELOG.md has neither '{UNRELEASED}' nor a section for {version}.")
    return version


def bump(root: Path, version: str, today: datetime.date | None = None) -> None:
    """Write `version` everywhere and turn the Unreleased notes into its dated section."""
    if not SEMVER.match(version):
        raise ReleaseError(f"{version!r} is not a version like 1.2.3.")
    changelog_path = root / "CHANGELOG.md"
    changelog = read(changelog_path)
    if UNRELEASED not in changelog.splitlines():
        raise ReleaseError(f"CHANGELOG.md has no '{UNRELEASED}' section to release; add one with the changes.")
    init = root / INIT
    write_atomic(init, VERSION_LINE.sub(f'__version__ = "{version}"', read(init)))
    for path, _ in json_versions(root).values():
        # Text, not json.dump: the files keep their own layout, and only the version strings change.
        write_atomic(path, JSON_VERSION.sub(rf'\g<1>{version}"', read(path)))
    date = (today or datetime.date.today()).isoformat()
    changelog = re.sub(rf"^{UNRELEASED}$", f"{UNRELEASED}\n\n## {version} - {date}", changelog, count=1,
                       flags=re.M)
    write_atomic(changelog_path, changelog)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_checksums(out: Path) -> Path:
    """SHA256SUMS beside the files, in the format `sha256sum --check` reads."""
    files = sorted(p for p in out.iterdir() if p.is_file() and p.name != "SHA256SUMS")
    sums = out / "SHA256SUMS"
    write_atomic(sums, "".join(f"{sha256(p)}  {p.name}\n" for p in files))
    return sums


def dist(root: Path, out: Path) -> list[Path]:
    """The sdist, the wheel (built from that sdist) and the npm tarball in `out`, with SHA256SUMS."""
    version = check(root, released=True)
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        raise ReleaseError(f"{out} is not empty: release files must come from one build. Empty it first.")
    steps = [[sys.executable, "-m", "build", "--outdir", str(out), str(root)]]
    npm = shutil.which("npm")
    if not npm:
        raise ReleaseError("npm is not installed; the release includes the npm package. Install Node 18+.")
    steps.append([npm, "pack", str(root), "--pack-destination", str(out)])
    for cmd in steps:
        if subprocess.run(cmd).returncode != 0:
            raise ReleaseError(f"`{' '.join(cmd[:3])} ...` failed; see its messages above.")
    names = {p.name for p in out.iterdir()}
    expected = {f"benchwarmers-{version}.tar.gz", f"benchwarmers-{version}-py3-none-any.whl",
                f"wendellresearch-ai-benchwarmers-{version}.tgz"}
    if not expected <= names:
        raise ReleaseError(f"expected {sorted(expected)} in {out}, found {sorted(names)}.")
    write_checksums(out)
    return sorted(out.iterdir())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/release.py", description=__doc__.split(":", 1)[1].strip())
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="every version in step; CHANGELOG.md has the version's section")
    c.add_argument("--released", action="store_true", help="also require the section to be dated")
    b = sub.add_parser("bump", help="write a new version everywhere and date its changelog section")
    b.add_argument("version")
    d = sub.add_parser("dist", help="build the sdist, wheel and npm tarball with SHA256SUMS")
    d.add_argument("--out", type=Path, default=ROOT / "dist")
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            print(f"release: version {check(args.root, args.released)} is the same everywhere")
        elif args.command == "bump":
            bump(args.root, args.version)
            print(f"release: version {args.version} written; review CHANGELOG.md, then commit and tag")
        else:
            for path in dist(args.root, args.out):
                print(path)
    except ReleaseError as e:
        print(f"release: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
