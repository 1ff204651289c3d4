"""The Claude Code plugin's Stop hook (`benchwarmers verdicts stop-hook`, as plugins/benchwarmers/hooks/hooks.json runs
it) on a Stop hook input and transcript written in Claude Code's documented shape (tests/fixtures/claude_hooks/README.md
says what they follow; neither is a capture) whose seats are real calls on a live service: it names this turn's
unjudged answers once, and stays silent otherwise."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchwarmers.mcp.tools import panel_data, panel_text
from tests.fakes import FakeOpenAI
from tests.helpers.data import configure
from tests.helpers.http import Http
from tests.test_mcp import closed_url

ROOT = Path(__file__).resolve().parent.parent
SHAPED = ROOT / "tests" / "fixtures" / "claude_hooks"
TOKEN = "admin-token-for-hooks-0123456789"

@pytest.fixture
def fake(home):
    with FakeOpenAI() as upstream:
        configure(home, {"fake": (upstream, "openai")}, {"alpha": ("fake", "alpha-1"), "beta": ("fake", "beta-1"),
                                                         "gamma": ("fake", "gamma-1")},
                  {"core": {"members": ["alpha", "beta"], "explore": 0}, "side": {"members": ["gamma"], "explore": 0}})
        yield upstream


def ask_text(http: Http, prompt: str, collection: str = "core", headers: dict | None = None) -> tuple[str, list]:
    """What the `ask` tool returned for a real ask: its text (as the transcript keeps it) and the seats' call ids."""
    status, _, reply = http("POST", "/v1/chat/completions", {"model": f"bench/{collection}", "messages": [
        {"role": "user", "content": prompt}]}, headers)
    assert status == 200, reply
    data = panel_data(reply["bench"], f"bench/{collection}", "")
    return panel_text(data), [s["call"] for s in data["seats"]]


def hook_input(tmp_path: Path, earlier: str, now: str, **changes) -> str:
    """The Stop input, pointing at a copy of the transcript with these two asks' texts in it."""
    lines = (SHAPED / "transcript.jsonl").read_text(encoding="utf-8")
    lines = lines.replace("EARLIER_ASK_TEXT", json.dumps(earlier)).replace("ASK_TEXT", json.dumps(now))
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(lines, encoding="utf-8")
    given = json.loads((SHAPED / "stop.json").read_text(encoding="utf-8").replace(
        '"TRANSCRIPT_PATH"', json.dumps(str(transcript))))
    return json.dumps({**given, **changes})


def run_hook(stdin: str, url: str, key: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHWARMERS_")}
    env["BENCHWARMERS_URL"] = url
    if key:
        env["BENCHWARMERS_KEY"] = key
    return subprocess.run([sys.executable, "-m", "benchwarmers", "verdicts", "stop-hook"], input=stdin, cwd=ROOT,
                          capture_output=True, text=True, encoding="utf-8", env=env, timeout=60)


def test_names_this_turns_unjudged_answers_once(fake, service, tmp_path):
    http = Http(service.url)
    earlier, earlier_calls = ask_text(http, "Can refresh() return a stale value?")
    now, calls = ask_text(http, "Is this eviction loop safe?")
    done = run_hook(hook_input(tmp_path, earlier, now), service.url)
    assert done.returncode == 0 and done.stderr == ""
    decision = json.loads(done.stdout)
    assert decision["decision"] == "block"
    for call in calls:
        assert f"call {call}" in decision["reason"]
    for call in earlier_calls:                       # an earlier turn's asks are not this turn's business
        assert call not in decision["reason"]
    assert "`verdict`" in decision["reason"] and "no verdict yet for 2 answers" in decision["reason"]

    # once per turn: after one reminder Claude Code sends stop_hook_active, and the hook lets the turn end
    again = run_hook(hook_input(tmp_path, earlier, now, stop_hook_active=True), service.url)
    assert again.returncode == 0 and again.stdout == ""

    http("POST", "/bench/verdict", {"call": calls[0], "useful": True})
    one = json.loads(run_hook(hook_input(tmp_path, earlier, now), service.url).stdout)
    assert calls[1] in one["reason"] and calls[0] not in one["reason"]
    http("POST", "/bench/verdict", {"call": calls[1], "useful": False})
    assert run_hook(hook_input(tmp_path, earlier, now), service.url).stdout == ""


def test_silent_when_the_service_is_down_or_the_input_is_not_a_hook_input(fake, service, tmp_path):
    http = Http(service.url)
    earlier, _ = ask_text(http, "earlier")
    now, _ = ask_text(http, "now")
    for stdin, url in ((hook_input(tmp_path, earlier, now), closed_url()), ("not json", service.url),
                       (json.dumps({"hook_event_name": "Stop"}), service.url),
                       (hook_input(tmp_path, earlier, now, transcript_path=str(tmp_path / "gone.jsonl")), service.url)):
        done = run_hook(stdin, url)
        assert done.returncode == 0 and done.stdout == "" and done.stderr == "", stdin[:80]


def test_a_turn_without_an_ask_is_left_alone(fake, service, tmp_path):
    http = Http(service.url)
    earlier, _ = ask_text(http, "earlier")
    assert run_hook(hook_input(tmp_path, earlier, "No panel was asked."), service.url).stdout == ""


def test_the_key_in_the_environment_limits_what_it_sees(fake, make_service, tmp_path):
    service = make_service(admin_token=TOKEN)
    http = Http(service.url)
    admin = {"Authorization": f"Bearer {TOKEN}"}
    keys = {}
    for name, collections in (("core-app", ["core"]), ("side-app", ["side"])):
        keys[name] = http("POST", "/bench/keys", {"name": name, "collections": collections}, admin)[2]["key"]
    earlier, _ = ask_text(http, "earlier", headers={"Authorization": f"Bearer {keys['core-app']}"})
    now, calls = ask_text(http, "now", headers={"Authorization": f"Bearer {keys['core-app']}"})
    stdin = hook_input(tmp_path, earlier, now)
    mine = run_hook(stdin, service.url, keys["core-app"])
    assert all(call in json.loads(mine.stdout)["reason"] for call in calls)
    assert keys["core-app"] not in mine.stdout
    assert run_hook(stdin, service.url, keys["side-app"]).stdout == ""     # another key's calls stay hidden
    assert run_hook(stdin, service.url).stdout == ""                       # keys enforced, none given: silent
