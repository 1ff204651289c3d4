"""The bench CLI against a running service in a subprocess: ask, verdict, collections, keys, exit codes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes import Reply
from tests.helpers.panel import MEMBERS, bench, fake, free_port, requests_for, setup_bench  # noqa: F401
from tests.helpers.http import Http

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "t" * 20


def bench_cli(url: str, *args: str, stdin: str | None = None, **env) -> subprocess.CompletedProcess:
    environ = {**os.environ, "BENCHWARMERS_URL": url, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8", **env}
    return subprocess.run([sys.executable, "-m", "benchwarmers", *args], cwd=str(ROOT), env=environ,
                          input=stdin.encode() if stdin is not None else None,
                          stdin=subprocess.DEVNULL if stdin is None else None, capture_output=True, timeout=60)


def out(proc) -> str:
    return proc.stdout.decode("utf-8")


def err(proc) -> str:
    return proc.stderr.decode("utf-8")


def last_user(fake, served: str = "m-a") -> str:
    return requests_for(fake, served)[-1].body["messages"][-1]["content"]


# ---- ask -----------------------------------------------------------------------------------------

def test_ask_writes_answers_to_stdout_and_the_seat_table_to_stderr(bench, fake):
    fake.script("m-c", Reply.error(500))
    proc = bench_cli(bench.url, "ask", "core", "Where is the bug?")
    assert proc.returncode == 0, err(proc)
    stdout, stderr = out(proc), err(proc)
    assert "## Seat 1 · a · member" in stdout and "m-a says: Where is the bug?" in stdout
    assert "## Seat 3 · c · member · failed" in stdout
    calls = Http(bench.url)("GET", "/bench/calls?collection=core")[2]["calls"]
    assert len(calls) == 4
    for call in calls:
        assert call["id"] in stderr and call["id"] not in stdout
    assert "seat" in stderr and "status" in stderr and "bench verdict" in stderr
    assert "m-a says" not in stderr


def test_piped_stdin_is_the_prompt(bench, fake):
    proc = bench_cli(bench.url, "ask", "core", stdin="piped question\n")
    assert proc.returncode == 0, err(proc)
    assert last_user(fake) == "piped question\n"
    proc = bench_cli(bench.url, "ask", "core", "Review this diff", stdin="+ added line\n")
    assert proc.returncode == 0, err(proc)
    assert last_user(fake) == "Review this diff\n\n<stdin>\n+ added line\n</stdin>"


def test_a_file_is_attached_with_its_name(bench, fake, tmp_path):
    path = tmp_path / "cache.py"
    path.write_text("def refresh():\n    return stale\n", encoding="utf-8")
    proc = bench_cli(bench.url, "ask", "core", "Any stale values?", "-f", str(path))
    assert proc.returncode == 0, err(proc)
    assert last_user(fake) == ('Any stale values?\n\n<file name="cache.py">\ndef refresh():\n    return stale\n'
                               "</file>")
    proc = bench_cli(bench.url, "ask", "core", "q", "-f", str(tmp_path / "missing.py"))
    assert proc.returncode == 2 and "missing.py" in err(proc)


def test_a_system_prompt_goes_to_every_seat(bench, fake):
    proc = bench_cli(bench.url, "ask", "core", "q", "--system", "Be terse.")
    assert proc.returncode == 0, err(proc)
    for served in ("m-a", "m-b", "m-c"):
        assert requests_for(fake, served)[0].body["messages"][0] == {"role": "system", "content": "Be terse."}


def test_nothing_to_ask_is_a_usage_error(bench, fake):
    proc = bench_cli(bench.url, "ask", "core")
    assert proc.returncode == 2 and "Nothing to ask" in err(proc)
    assert requests_for(fake, "m-a") == []


def test_ask_merged_with_an_extra_seat(bench, fake):
    fake.script("m-merge", "THE MERGED ANSWER")
    proc = bench_cli(bench.url, "ask", "core", "q", "--merged", "--with", "x")
    assert proc.returncode == 0, err(proc)
    assert out(proc) == "THE MERGED ANSWER\n"
    assert "merged by merger" in err(proc)
    assert len(requests_for(fake, "m-x")) == 1 and len(requests_for(fake, "m-merge")) == 1


def test_ask_json(bench, fake):
    proc = bench_cli(bench.url, "ask", "core", "q", "--json")
    assert proc.returncode == 0, err(proc)
    data = json.loads(out(proc))
    assert [s["model"] for s in data["bench"]["seats"]][:3] == MEMBERS
    assert data["choices"][0]["message"]["content"].startswith("## Seat 1")


def test_ask_a_model_alias_directly(bench, fake):
    proc = bench_cli(bench.url, "ask", "y", "solo")
    assert proc.returncode == 0, err(proc)
    assert "m-y says: solo" in out(proc) and len(requests_for(fake, "m-a")) == 0


def test_ask_failures_exit_1_with_the_reason(bench, fake):
    fake.script("*", Reply.error(500, "every upstream is down"))
    proc = bench_cli(bench.url, "ask", "core", "q")
    # answers stream as seats finish, so the failed seats' blocks show on stdout as they fail; no answer does
    assert proc.returncode == 1 and "every upstream is down" in err(proc) and "says:" not in out(proc)
    assert "Every seat failed" in err(proc)
    proc = bench_cli(bench.url, "ask", "nope", "q")
    assert proc.returncode == 1 and "nope" in err(proc) and "bench/core" in err(proc)


def test_no_service_is_exit_3(home):
    proc = bench_cli(f"http://127.0.0.1:{free_port()}", "ask", "core", "q")
    assert proc.returncode == 3 and "No Benchwarmers service" in err(proc)
    assert bench_cli(f"http://127.0.0.1:{free_port()}", "collections").returncode == 3


# ---- verdicts, collections, keys -----------------------------------------------------------------

def test_verdict_from_the_cli(bench, fake):
    call = Http(bench.url)("POST", "/v1/chat/completions", {"model": "bench/core", "messages": [
        {"role": "user", "content": "q"}]})[2]["bench"]["seats"][0]["call"]
    proc = bench_cli(bench.url, "verdict", call, "--useful", "--real", "the race", "--note", "nice")
    assert proc.returncode == 0, err(proc)
    assert call in err(proc) and out(proc) == ""
    proc = bench_cli(bench.url, "verdict", call, "--not-useful", "--false", "the injection")
    assert proc.returncode == 0 and "revised" in err(proc)
    history = Http(bench.url)("GET", f"/bench/calls/{call}")[2]["verdicts"]
    assert [(v["useful"], v["real"], v["false"], v["current"]) for v in history] == [
        (True, ["the race"], [], False), (False, [], ["the injection"], True)]
    assert history[0]["note"] == "nice"
    proc = bench_cli(bench.url, "verdict", "nope", "--useful")
    assert proc.returncode == 1 and "nope" in err(proc)
    assert bench_cli(bench.url, "verdict", call).returncode == 2    # --useful or --not-useful is required


def test_collections_save_and_delete(bench):
    proc = bench_cli(bench.url, "collections")
    assert proc.returncode == 0 and "core" in out(proc) and "a,b,c" in out(proc)
    proc = bench_cli(bench.url, "collection", "save", "design", "--members", "a,b", "--description", "designers",
                     "--explore", "0")
    assert proc.returncode == 0, err(proc)
    got = Http(bench.url)("GET", "/bench/collections/design")[2]
    assert (got["members"], got["description"], got["explore"]) == (["a", "b"], "designers", 0)
    proc = bench_cli(bench.url, "collection", "save", "design", "--add", "x", "--remove", "a")
    assert proc.returncode == 0 and Http(bench.url)("GET", "/bench/collections/design")[2]["members"] == ["b", "x"]
    proc = bench_cli(bench.url, "collection", "save", "design", "--add", "ghost")
    assert proc.returncode == 1 and "ghost" in err(proc)
    data = json.loads(out(bench_cli(bench.url, "collections", "--json")))
    assert sorted(c["name"] for c in data["collections"]) == ["core", "design"]
    proc = bench_cli(bench.url, "collection", "delete", "design")          # no terminal, no --yes: refused
    assert proc.returncode == 1 and Http(bench.url)("GET", "/bench/collections/design")[0] == 200
    proc = bench_cli(bench.url, "collection", "delete", "design", "--yes")
    assert proc.returncode == 0, err(proc)
    assert Http(bench.url)("GET", "/bench/collections/design")[0] == 404


def test_keys_create_list_revoke_and_use(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a"], "explore": 0}, "other": {"members": ["b"], "explore": 0}})
    url = make_service(admin_token=TOKEN).url
    admin = {"BENCHWARMERS_ADMIN_TOKEN": TOKEN}
    assert bench_cli(url, "key", "create", "app", "--collections", "core").returncode == 1   # no admin token
    proc = bench_cli(url, "key", "create", "app", "--collections", "core", "--rpm", "30", **admin)
    assert proc.returncode == 0, err(proc)
    secret = out(proc).strip()
    assert secret.startswith("bw-") and secret not in err(proc) and "Shown once" in err(proc)
    proc = bench_cli(url, "key", "list", **admin)
    assert proc.returncode == 0 and "app" in out(proc) and secret not in out(proc)
    as_app = {"BENCHWARMERS_KEY": secret}
    proc = bench_cli(url, "ask", "core", "q", **as_app)
    assert proc.returncode == 0 and "m-a says: q" in out(proc)
    proc = bench_cli(url, "collections", **as_app)
    assert proc.returncode == 0 and "core" in out(proc) and "other" not in out(proc)
    proc = bench_cli(url, "ask", "other", "q", **as_app)
    assert proc.returncode == 1 and "other" in err(proc)
    assert bench_cli(url, "key", "revoke", "app", **admin).returncode == 1     # no terminal, no --yes
    proc = bench_cli(url, "key", "revoke", "app", "--yes", **admin)
    assert proc.returncode == 0, err(proc)
    proc = bench_cli(url, "ask", "core", "q", **as_app)
    assert proc.returncode == 1 and "not valid" in err(proc)
    listed = json.loads(out(bench_cli(url, "key", "list", "--json", **admin)))["keys"]
    assert [(k["name"], bool(k["revoked"])) for k in listed] == [("app", True)]


