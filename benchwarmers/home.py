"""Where the data folder is, and how a new one is seeded from examples/."""
from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
CHECKOUT_DIR = PACKAGE_DIR.parent
POINTER = ".benchwarmers-home"
APP_NAME = "benchwarmers"
# Seeded into every data folder (their first contents: store/config.py's DEFAULTS).
CONFIG_FILES = ("endpoints.json", "models.json", "collections.json", "settings.json", "repos.json", "limits.json")


def in_checkout() -> bool:
    """A checkout (or the npm package) has serve.py beside the package; an installed wheel sits in site-packages."""
    return (CHECKOUT_DIR / "serve.py").is_file()


def examples_dir() -> Path:
    """The seed of a new data folder: beside the package in a checkout, inside it when installed."""
    # Only trust <parent>/examples in a checkout: in site-packages it could belong to some other package.
    candidates = ((CHECKOUT_DIR / "examples",) if in_checkout() else ()) + (PACKAGE_DIR / "examples",)
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return candidates[0]


def os_data_dir(platform: str | None = None, environ: Mapping[str, str] | None = None,
                home: Path | None = None) -> Path:
    """The per-user data folder of this OS (Linux XDG, macOS Application Support, Windows LOCALAPPDATA)."""
    platform = platform or sys.platform
    env = os.environ if environ is None else environ
    home = home or Path.home()
    if platform.startswith("win"):
        base = env.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(base) / APP_NAME
    if platform == "darwin":
        return home / "Library" / "Application Support" / APP_NAME
    xdg = env.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else home / ".local" / "share") / APP_NAME


def pointer_file(checkout: Path | None = None) -> Path:
    return (checkout or CHECKOUT_DIR) / POINTER


def resolve(environ: Mapping[str, str] | None = None, checkout: Path | None = None, platform: str | None = None,
            home: Path | None = None) -> Path:
    """BENCHWARMERS_HOME, then the checkout's .benchwarmers-home pointer, then the OS per-user folder."""
    env = os.environ if environ is None else environ
    if env.get("BENCHWARMERS_HOME"):
        return Path(env["BENCHWARMERS_HOME"]).expanduser().resolve()
    pointer = pointer_file(checkout)
    if (checkout or in_checkout()) and pointer.is_file():
        target = pointer.read_text(encoding="utf-8").strip()
        if target:
            path = Path(target).expanduser()
            return (path if path.is_absolute() else pointer.parent / path).resolve()
    return os_data_dir(platform, env, home)


def is_initialised(folder: Path) -> bool:
    return (folder / "config").is_dir()


def init(folder: Path, write_pointer: bool = False, checkout: Path | None = None) -> list[Path]:
    """Seed `folder` from examples/, never overwriting a file that is there. Returns the files created."""
    folder = Path(folder).expanduser().resolve()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)   # prompts and answers: readable by their owner alone
    created = []
    source = examples_dir()
    for src in sorted(source.rglob("*")) if source.is_dir() else []:
        if src.is_dir() or src.name.startswith("."):
            continue
        dest = folder / src.relative_to(source)
        if dest.exists():
            continue
        dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        created.append(dest)
    (folder / "config").mkdir(mode=0o700, parents=True, exist_ok=True)
    if write_pointer and (checkout or in_checkout()):   # never write into site-packages
        pointer = pointer_file(checkout)
        pointer.write_text(str(folder) + "\n", encoding="utf-8")
    return created


def ensure(folder: Path | None = None) -> Path:
    """The data folder, seeded on first use."""
    folder = folder or resolve()
    if not is_initialised(folder):
        init(folder)
    return folder
