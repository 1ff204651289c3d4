"""Where the browser tests find Chrome or Chromium: on PATH, else where each OS's installers put it."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ON_PATH = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
MACOS_APPS = ("Google Chrome.app/Contents/MacOS/Google Chrome", "Chromium.app/Contents/MacOS/Chromium")
WINDOWS_APPS = ("Google/Chrome/Application/chrome.exe", "Chromium/Application/chrome.exe")


def installed(platform: str | None = None, environ: dict | None = None, home: Path | None = None) -> list[Path]:
    """The standard install paths to look in, for this OS (or the one given)."""
    platform = platform or sys.platform
    environ = os.environ if environ is None else environ
    if platform == "darwin":
        roots = [Path("/Applications"), (home or Path.home()) / "Applications"]
        return [root / app for root in roots for app in MACOS_APPS]
    if platform.startswith("win"):
        roots = [environ.get(name) for name in ("PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA")]
        return [Path(root) / app for root in roots if root for app in WINDOWS_APPS]
    return []


def find_chromium() -> str | None:
    for name in ON_PATH:
        found = shutil.which(name)
        if found:
            return found
    return next((str(p) for p in installed() if p.is_file()), None)
