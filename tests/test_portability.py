"""What the tests and the command assume about the OS: where a browser is, which bash runs snippets, when the
terminal is redrawn in place."""
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from benchwarmers.cli import terminal
from tests.helpers import browser, shell


def test_chrome_and_chromium_are_looked_for_where_macos_and_windows_install_them():
    mac = browser.installed("darwin", home=Path("/Users/someone"))
    assert Path("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome") in mac
    assert Path("/Users/someone/Applications/Chromium.app/Contents/MacOS/Chromium") in mac
    win = browser.installed("win32", environ={"PROGRAMFILES": r"C:\Program Files",
                                              "LOCALAPPDATA": r"C:\Users\someone\AppData\Local"})
    assert Path(r"C:\Program Files") / "Google/Chrome/Application/chrome.exe" in win
    assert Path(r"C:\Users\someone\AppData\Local") / "Chromium/Application/chrome.exe" in win
    assert browser.installed("linux") == []        # on Linux a browser is on PATH or not at all


@pytest.mark.skipif(os.name == "nt", reason="POSIX: any bash on PATH will do")
def test_on_posix_any_bash_runs_the_snippets():
    import shutil
    assert shell.bash() == shutil.which("bash")


def test_a_pipe_or_a_file_is_never_redrawn_in_place():
    assert terminal.can_redraw(io.StringIO()) is False


def test_the_users_pythonioencoding_is_left_alone(monkeypatch):
    class Stream(io.StringIO):
        touched = False

        def reconfigure(self, **kw):
            Stream.touched = True

    monkeypatch.setattr("sys.stdout", Stream())
    terminal.prepare({"PYTHONIOENCODING": "cp1252"})
    assert not Stream.touched
    terminal.prepare({})
    assert Stream.touched
