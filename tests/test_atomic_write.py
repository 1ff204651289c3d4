"""Config and key writes when the file is held open elsewhere (Windows refuses the rename for a moment): tried again,
and never a temp file left behind."""
from __future__ import annotations

import json
import os
import threading

import pytest

from benchwarmers import keys
from benchwarmers.store import config as config_mod


class HeldOpen:
    """os.replace as Windows answers it while another process holds the target open: PermissionError `times` times.
    (Only the standard library's rename is stood in for; our code runs as it is.)"""

    def __init__(self, times: int):
        self.left, self.calls, self.real = times, 0, os.replace

    def __call__(self, src, dst):
        self.calls += 1
        if self.left:
            self.left -= 1
            raise PermissionError(13, "The process cannot access the file because it is being used by another "
                                      "process", str(dst))
        return self.real(src, dst)


def leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_file_held_open_for_a_moment_is_still_written(tmp_path, monkeypatch):
    held = HeldOpen(times=3)
    monkeypatch.setattr(os, "replace", held)
    path = tmp_path / "settings.json"
    config_mod.atomic_write(path, {"panel_workers": 4})
    assert json.loads(path.read_text(encoding="utf-8")) == {"panel_workers": 4}
    assert held.calls == 4 and leftovers(tmp_path) == []


def test_a_file_held_open_for_good_fails_and_leaves_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "settings.json"
    config_mod.atomic_write(path, {"before": True})
    monkeypatch.setattr(os, "replace", HeldOpen(times=1000))
    monkeypatch.setattr(config_mod, "REPLACE_WAITS", (0.0, 0.0))
    with pytest.raises(PermissionError):
        config_mod.atomic_write(path, {"after": True})
    assert json.loads(path.read_text(encoding="utf-8")) == {"before": True}     # the old file, whole
    assert leftovers(tmp_path) == []


def test_keys_json_held_open_is_written_once_it_is_let_go(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "replace", HeldOpen(times=2))
    env = {"LLM_USER_PATH": str(tmp_path)}
    keys.store("hub", "hub-key-abcdef", env)
    assert json.loads((tmp_path / "keys.json").read_text(encoding="utf-8"))["hub"] == "hub-key-abcdef"
    assert [p.name for p in tmp_path.iterdir()] == ["keys.json"]


def test_a_write_that_fails_midway_leaves_no_temp_file(tmp_path):
    with pytest.raises(TypeError):
        config_mod.atomic_write(tmp_path / "models.json", {"models": {"x": object()}})   # not JSON
    assert leftovers(tmp_path) == [] and not (tmp_path / "models.json").exists()


@pytest.mark.skipif(os.name != "nt", reason="only Windows refuses to replace a file another handle holds open")
def test_on_windows_a_reader_holding_the_file_delays_the_write_only(tmp_path):
    path = tmp_path / "settings.json"
    config_mod.atomic_write(path, {"n": 1})
    reader = open(path, "rb")                      # Python opens without FILE_SHARE_DELETE: the rename must wait
    threading.Timer(0.3, reader.close).start()
    config_mod.atomic_write(path, {"n": 2})
    assert json.loads(path.read_text(encoding="utf-8")) == {"n": 2} and leftovers(tmp_path) == []
