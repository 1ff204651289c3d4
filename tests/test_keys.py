"""Provider keys: environment first, then llm's keys.json (0600, other entries kept), and redaction."""
from __future__ import annotations

import json
import os
import threading

import pytest

from benchwarmers import keys
from benchwarmers.errors import ConfigError, key_env
from benchwarmers.redaction import redact


def test_key_env_upper_cases_and_replaces_other_characters():
    assert key_env("openrouter") == "BENCHWARMERS_KEY_OPENROUTER"
    assert key_env("my-hub.v2") == "BENCHWARMERS_KEY_MY_HUB_V2"


def test_environment_wins_over_keys_json(tmp_path):
    env = {"LLM_USER_PATH": str(tmp_path), "BENCHWARMERS_KEY_HUB": "from-env-123456"}
    keys.store("hub", "from-file-123456", env)
    assert keys.get("hub", env) == ("from-env-123456", "environment")


def test_keys_json_is_read_when_no_env(tmp_path):
    env = {"LLM_USER_PATH": str(tmp_path)}
    keys.store("hub", "from-file-123456", env)
    assert keys.get("hub", env) == ("from-file-123456", "keys.json")


def test_a_hand_edit_of_keys_json_counts_from_the_next_lookup(tmp_path):
    env, path = {"LLM_USER_PATH": str(tmp_path)}, tmp_path / "keys.json"
    path.write_text(json.dumps({"hub": "first-key-123456"}), encoding="utf-8")
    assert keys.get("hub", env) == ("first-key-123456", "keys.json")
    path.write_text(json.dumps({"hub": "second-key-12345"}), encoding="utf-8")   # same size, same inode
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    assert keys.get("hub", env) == ("second-key-12345", "keys.json")
    path.write_text("{not json", encoding="utf-8")
    assert keys.get("hub", env) == (None, None)
    path.unlink()
    assert keys.get("hub", env) == (None, None)


def test_missing_key_is_none(tmp_path):
    assert keys.get("nobody", {"LLM_USER_PATH": str(tmp_path)}) == (None, None)


def test_broken_keys_json_reads_as_empty(tmp_path):
    (tmp_path / "keys.json").write_text("{not json", encoding="utf-8")
    assert keys.get("hub", {"LLM_USER_PATH": str(tmp_path)}) == (None, None)


def test_store_keeps_llm_entries_and_sets_mode(tmp_path):
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"openai": "sk-llm-own-key-000000"}), encoding="utf-8")
    env = {"LLM_USER_PATH": str(tmp_path)}
    assert keys.store("hub", "hub-key-abcdef", env) == path
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["openai"] == "sk-llm-own-key-000000"
    assert data["hub"] == "hub-key-abcdef"
    if os.name == "posix":
        assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["keys.json"]     # no temp file left behind


def test_concurrent_stores_lose_nothing(tmp_path):
    env = {"LLM_USER_PATH": str(tmp_path)}
    threads = [threading.Thread(target=keys.store, args=(f"ep{i}", f"key-value-{i:04d}", env)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    data = json.loads((tmp_path / "keys.json").read_text(encoding="utf-8"))
    assert all(data[f"ep{i}"] == f"key-value-{i:04d}" for i in range(20))


def test_delete(tmp_path):
    env = {"LLM_USER_PATH": str(tmp_path)}
    keys.store("hub", "hub-key-abcdef", env)
    assert keys.delete("hub", env) is True
    assert keys.delete("hub", env) is False
    assert keys.get("hub", env) == (None, None)


def test_redact_removes_known_keys_and_key_shapes(tmp_path):
    env = {"LLM_USER_PATH": str(tmp_path)}
    keys.store("hub", "plainsecretvalue42", env)
    text = ("failed with plainsecretvalue42; also sk-abcdefghijklmnop and AIza" + "x" * 30
            + " and Authorization: Bearer abcdefghijklmnopq")
    out = redact(text)
    for leaked in ("plainsecretvalue42", "sk-abcdefghijklmnop", "AIza" + "x" * 30, "abcdefghijklmnopq"):
        assert leaked not in out
    assert out.count("[redacted]") == 4
    assert redact("nothing secret here") == "nothing secret here"
    assert redact("with extra-secret-1", "extra-secret-1") == "with [redacted]"


def test_a_keys_json_that_does_not_parse_is_never_written_over(tmp_path):
    """The user's (and the llm CLI's) other keys survive: store and delete refuse, naming the file and line."""
    path = tmp_path / "keys.json"
    broken = '{\n  "openai": "sk-llm-own-key-000000",\n  "anthropic": "sk-ant-own-key-000000"\n  "oops"\n}\n'
    path.write_text(broken, encoding="utf-8")
    env = {"LLM_USER_PATH": str(tmp_path)}
    for attempt in (lambda: keys.store("hub", "hub-key-abcdef", env), lambda: keys.delete("openai", env)):
        with pytest.raises(ConfigError) as err:
            attempt()
        assert f"{path}:4:" in err.value.message and "will not overwrite" in str(err.value)
        assert path.read_text(encoding="utf-8") == broken
    assert [p.name for p in tmp_path.iterdir()] == ["keys.json"]
    path.write_text(broken.replace('"\n  "oops"', '"'), encoding="utf-8")   # mended by hand: writes work again
    keys.store("hub", "hub-key-abcdef", env)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["openai"] == "sk-llm-own-key-000000" and data["anthropic"] == "sk-ant-own-key-000000"
    assert data["hub"] == "hub-key-abcdef"
