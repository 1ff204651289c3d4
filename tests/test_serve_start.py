"""Starting the service: a port in use and a data folder that cannot be used are each refused, in their own words."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def serve(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "BENCHWARMERS_HOME": str(home), "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    try:
        return subprocess.run([sys.executable, "-m", "benchwarmers", *args, "--no-browser"], cwd=str(ROOT), env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, encoding="utf-8", timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`benchwarmers {' '.join(args)}` started instead of refusing")


def test_a_port_another_service_holds_is_refused(service, tmp_path):
    """On Windows, SO_REUSEADDR would let this second bind succeed beside the first: the port is claimed exclusively."""
    port = service.url.rsplit(":", 1)[1]
    out = serve(tmp_path / "other", "serve", "--port", port)
    assert out.returncode == 1, out.stderr
    assert f"Cannot listen on 127.0.0.1:{port}" in out.stderr and "Choose another --port" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["gateway", "--port", "0"], []])
def test_a_data_folder_that_cannot_be_made_is_named(tmp_path, command):
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    folder = tmp_path / "a-file" / "data"          # a folder under a file: no user, root included, can create it
    out = serve(folder, *command)
    assert out.returncode == 1, out.stderr
    assert f"Cannot use the data folder {folder}" in out.stderr and "BENCHWARMERS_HOME" in out.stderr
    assert "Cannot listen" not in out.stderr and "Traceback" not in out.stderr


def test_a_database_that_cannot_be_opened_is_the_data_folders_fault(tmp_path):
    from benchwarmers import home
    folder = tmp_path / "data"
    home.init(folder)
    (folder / "bench.db").mkdir()                  # where the database file belongs
    out = serve(folder, "serve", "--port", "0")
    assert out.returncode == 1, out.stderr
    assert f"Cannot use the data folder {folder}" in out.stderr
    assert "Failed:" not in out.stderr and "Cannot listen" not in out.stderr
