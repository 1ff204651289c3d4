"""The data folder: where it resolves on each OS, the pointer file, seeding that never overwrites, scripts/init.py."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchwarmers import home, keys

ROOT = Path(__file__).resolve().parent.parent


# ---- the OS per-user folder ------------------------------------------------------------------

def test_linux_uses_xdg_data_home(tmp_path):
    got = home.os_data_dir("linux", {"XDG_DATA_HOME": str(tmp_path / "xdg")}, tmp_path / "me")
    assert got == tmp_path / "xdg" / "benchwarmers"


def test_linux_without_xdg_uses_local_share(tmp_path):
    got = home.os_data_dir("linux", {}, tmp_path / "me")
    assert got == tmp_path / "me" / ".local" / "share" / "benchwarmers"


def test_macos_uses_application_support(tmp_path):
    got = home.os_data_dir("darwin", {"XDG_DATA_HOME": "/ignored"}, tmp_path / "me")
    assert got == tmp_path / "me" / "Library" / "Application Support" / "benchwarmers"


def test_windows_uses_localappdata(tmp_path):
    got = home.os_data_dir("win32", {"LOCALAPPDATA": str(tmp_path / "Local")}, tmp_path / "me")
    assert got == tmp_path / "Local" / "benchwarmers"


def test_windows_without_localappdata_falls_back_under_the_profile(tmp_path):
    got = home.os_data_dir("win32", {}, tmp_path / "me")
    assert got == tmp_path / "me" / "AppData" / "Local" / "benchwarmers"


# ---- resolution order: env var, pointer file, OS folder -----------------------------------------

def test_env_var_wins_over_pointer(tmp_path):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / home.POINTER).write_text(str(tmp_path / "pointed") + "\n", encoding="utf-8")
    got = home.resolve({"BENCHWARMERS_HOME": str(tmp_path / "env")}, checkout, "linux", tmp_path / "me")
    assert got == (tmp_path / "env").resolve()


def test_pointer_file_is_used_without_env(tmp_path):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / home.POINTER).write_text(str(tmp_path / "pointed") + "\n", encoding="utf-8")
    got = home.resolve({}, checkout, "linux", tmp_path / "me")
    assert got == (tmp_path / "pointed").resolve()


def test_relative_pointer_is_relative_to_the_checkout(tmp_path):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / home.POINTER).write_text("../data-here\n", encoding="utf-8")
    assert home.resolve({}, checkout, "linux", tmp_path / "me") == (tmp_path / "data-here").resolve()


def test_empty_pointer_is_ignored(tmp_path):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / home.POINTER).write_text("\n", encoding="utf-8")
    got = home.resolve({}, checkout, "linux", tmp_path / "me")
    assert got == tmp_path / "me" / ".local" / "share" / "benchwarmers"


def test_os_folder_is_last(tmp_path):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    got = home.resolve({"LOCALAPPDATA": str(tmp_path / "L")}, checkout, "win32", tmp_path / "me")
    assert got == tmp_path / "L" / "benchwarmers"


# ---- keys.json: where the llm CLI keeps it -----------------------------------------------------

@pytest.mark.parametrize("platform,env,expected", [
    ("win32", {"APPDATA": "{t}/Roaming"}, "{t}/Roaming/io.datasette.llm"),
    ("darwin", {}, "{t}/me/Library/Application Support/io.datasette.llm"),
    ("linux", {"XDG_CONFIG_HOME": "{t}/cfg"}, "{t}/cfg/io.datasette.llm"),
    ("linux", {}, "{t}/me/.config/io.datasette.llm"),
])
def test_llm_user_dir_per_os(tmp_path, platform, env, expected):
    env = {k: v.format(t=tmp_path) for k, v in env.items()}
    got = keys.llm_user_dir(platform, env, tmp_path / "me")
    assert got == Path(expected.format(t=tmp_path))


@pytest.mark.parametrize("platform", ["win32", "darwin", "linux"])
def test_llm_user_path_wins_everywhere(tmp_path, platform):
    env = {"LLM_USER_PATH": str(tmp_path / "mine"), "APPDATA": "x", "XDG_CONFIG_HOME": "y"}
    assert keys.llm_user_dir(platform, env, tmp_path / "me") == tmp_path / "mine"
    assert keys.keys_file(env) == tmp_path / "mine" / "keys.json"


# ---- init ---------------------------------------------------------------------------------------

def test_init_seeds_every_config_file(tmp_path):
    created = home.init(tmp_path / "d")
    names = {p.name for p in created}
    assert set(home.CONFIG_FILES) <= names
    for name in home.CONFIG_FILES:
        json.loads((tmp_path / "d" / "config" / name).read_text(encoding="utf-8"))
    assert home.is_initialised(tmp_path / "d")


def test_init_never_overwrites_a_user_edit(tmp_path):
    folder = tmp_path / "d"
    home.init(folder)
    edited = folder / "config" / "collections.json"
    edited.write_text('{"collections": {"mine": {"members": ["a"]}}}\n', encoding="utf-8")
    (folder / "config" / "models.json").unlink()
    created = home.init(folder)
    assert [p.name for p in created] == ["models.json"]       # only the missing file comes back
    assert json.loads(edited.read_text(encoding="utf-8")) == {"collections": {"mine": {"members": ["a"]}}}


def test_init_writes_the_pointer_in_the_given_checkout(tmp_path):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    home.init(tmp_path / "d", write_pointer=True, checkout=checkout)
    assert home.resolve({}, checkout) == (tmp_path / "d").resolve()


def test_ensure_seeds_only_once(tmp_path):
    folder = tmp_path / "d"
    assert home.ensure(folder) == folder
    settings = folder / "config" / "settings.json"
    settings.write_text('{"seat_timeout": 5}\n', encoding="utf-8")
    home.ensure(folder)
    assert json.loads(settings.read_text(encoding="utf-8")) == {"seat_timeout": 5}


def test_examples_come_from_the_checkout():
    assert home.in_checkout()
    assert home.examples_dir() == ROOT / "examples"


# ---- scripts/init.py ---------------------------------------------------------------------------

@pytest.fixture
def checkout_copy(tmp_path) -> Path:
    """A copy of the checkout, so init's pointer file never lands in the real one."""
    dest = tmp_path / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "benchwarmers", dest / "benchwarmers", ignore=ignore)
    shutil.copytree(ROOT / "examples", dest / "examples", ignore=ignore)
    (dest / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "init.py", dest / "scripts" / "init.py")
    shutil.copy2(ROOT / "serve.py", dest / "serve.py")
    return dest


def test_init_script_stores_the_key_in_keys_json_only(tmp_path, checkout_copy):
    secret = "sk-test-" + "q7Zr" * 8
    folder = tmp_path / "bench-data"
    llm = tmp_path / "llm-user"
    env = {k: v for k, v in os.environ.items() if k != "BENCHWARMERS_HOME"}
    env.update(LLM_USER_PATH=str(llm), PYTHONPATH="")
    out = subprocess.run([sys.executable, str(checkout_copy / "scripts" / "init.py"), str(folder),
                          "--endpoint", "openrouter", "https://openrouter.ai/api/v1", "--key-stdin"],
                         input=secret + "\n", capture_output=True, text=True, encoding="utf-8", errors="replace",
                         env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert secret not in out.stdout + out.stderr

    stored = json.loads((llm / "keys.json").read_text(encoding="utf-8"))
    assert stored["openrouter"] == secret
    if os.name == "posix":
        assert (llm / "keys.json").stat().st_mode & 0o777 == 0o600

    endpoints = json.loads((folder / "config" / "endpoints.json").read_text(encoding="utf-8"))
    assert endpoints["endpoints"]["openrouter"]["base_url"] == "https://openrouter.ai/api/v1"
    for path in folder.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), f"the key leaked into {path}"
    # The checkout now points at the folder.
    assert (checkout_copy / home.POINTER).read_text(encoding="utf-8").strip() == str(folder.resolve())


@pytest.mark.parametrize("given", ["piped", "nothing"])
def test_init_script_key_without_a_terminal_reads_stdin_or_saves_nothing(tmp_path, checkout_copy, given):
    """--key with no terminal to prompt on: the key comes from stdin, as with --key-stdin; with none there, nothing
    is saved (it saved the endpoint without its key, then exited 2)."""
    secret = "sk-test-" + "w3Xy" * 8
    folder, llm = tmp_path / "bench-data", tmp_path / "llm-user"
    env = {k: v for k, v in os.environ.items() if k != "BENCHWARMERS_HOME"}
    env.update(LLM_USER_PATH=str(llm), PYTHONPATH="")
    out = subprocess.run([sys.executable, str(checkout_copy / "scripts" / "init.py"), str(folder),
                          "--endpoint", "openrouter", "https://openrouter.ai/api/v1", "--key"],
                         input=secret + "\n" if given == "piped" else "", capture_output=True, text=True,
                         encoding="utf-8", errors="replace", env=env, timeout=60)
    if given == "piped":
        assert out.returncode == 0, out.stderr
        assert json.loads((llm / "keys.json").read_text(encoding="utf-8"))["openrouter"] == secret
        endpoints = json.loads((folder / "config" / "endpoints.json").read_text(encoding="utf-8"))["endpoints"]
        assert endpoints["openrouter"]["base_url"] == "https://openrouter.ai/api/v1"
    else:
        assert out.returncode == 1 and "nothing was saved" in out.stderr and "--key-stdin" in out.stderr
        assert not (llm / "keys.json").exists() and not folder.exists()
    assert secret not in out.stdout + out.stderr


def test_init_script_keeps_an_existing_folder(tmp_path, checkout_copy):
    folder = tmp_path / "bench-data"
    home.init(folder)
    models = folder / "config" / "models.json"
    models.write_text('{"models": {"kept": {"endpoint": "x", "served": "y"}}}\n', encoding="utf-8")
    env = {**os.environ, "LLM_USER_PATH": str(tmp_path / "llm"), "PYTHONPATH": ""}
    out = subprocess.run([sys.executable, str(checkout_copy / "scripts" / "init.py"), str(folder)],
                         capture_output=True, text=True, encoding="utf-8", errors="replace", env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "kept" in json.loads(models.read_text(encoding="utf-8"))["models"]


def test_init_script_key_without_endpoint_is_a_usage_error(tmp_path, checkout_copy):
    env = {**os.environ, "LLM_USER_PATH": str(tmp_path / "llm"), "PYTHONPATH": ""}
    out = subprocess.run([sys.executable, str(checkout_copy / "scripts" / "init.py"), str(tmp_path / "d"),
                          "--key-stdin"], input="sk-whatever-123456\n", capture_output=True, text=True,
                         encoding="utf-8", errors="replace", env=env, timeout=60)
    assert out.returncode == 2
    assert "--endpoint" in out.stderr
    assert not (tmp_path / "llm" / "keys.json").exists()


def test_init_refuses_to_write_a_key_over_a_broken_keys_json(isolated, monkeypatch, capsys):
    import io
    from benchwarmers.cli.main import main
    path = isolated.parent / "llm" / "keys.json"
    path.parent.mkdir(parents=True)
    broken = '{"openai": "sk-llm-own-key-000000",\n  oops}\n'
    path.write_text(broken, encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.StringIO("sk-new-key-123456789\n"))
    code = main(["init", "--endpoint", "hub", "https://example.invalid/v1", "--key-stdin"])
    err = capsys.readouterr().err
    assert code == 1 and f"{path}:2:" in err and "sk-new-key" not in err
    assert path.read_text(encoding="utf-8") == broken
    saved = isolated / "config" / "endpoints.json"            # no endpoint left behind without its key
    assert "hub" not in (json.loads(saved.read_text(encoding="utf-8")).get("endpoints") or {})


def test_init_checks_the_endpoint_like_the_api_and_keeps_an_existing_one(isolated, capsys):
    from benchwarmers.cli.main import main
    assert main(["init", "--endpoint", "bad name", "https://example.invalid/v1"]) == 2
    assert "not a valid name" in capsys.readouterr().err and not (isolated / "config").exists()
    assert main(["init", "--endpoint", "hub", "ftp://example.invalid"]) == 2
    assert main(["init", "--endpoint", "meta", "http://169.254.169.254/v1"]) == 2
    assert "--allow-link-local" in capsys.readouterr().err and not (isolated / "config").exists()
    assert main(["init", "--endpoint", "hub", "https://one.invalid/v1/", "--api", "anthropic"]) == 0
    assert main(["init", "--endpoint", "hub", "https://two.invalid/v1"]) == 0
    assert "kept as it is" in capsys.readouterr().err
    assert main(["init", "--endpoint", "meta", "http://169.254.169.254/v1", "--allow-link-local"]) == 0
    saved = json.loads((isolated / "config" / "endpoints.json").read_text(encoding="utf-8"))["endpoints"]
    assert saved["meta"]["base_url"] == "http://169.254.169.254/v1"
    saved = saved["hub"]
    assert (saved["base_url"], saved["api"]) == ("https://one.invalid/v1", "anthropic")
