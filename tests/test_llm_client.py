"""BENCH_CLIENT=llm (or the `client` setting): member calls made by the real llm package, through its OpenAI plugin
configured in extra-openai-models.yaml to reach a fake upstream. The fake sees the openai SDK's user agent, never
ours, so each test knows which client made the call."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchwarmers.canonical import Ask, Message, Text
from benchwarmers.errors import FaultKind, UpstreamFailed
from benchwarmers.providers import Timeouts
from benchwarmers.providers.llmcalls import LlmCalls
from benchwarmers.providers.ratelimits import KEY, MODEL
from tests.fakes import Reply
from tests.helpers.data import write
from tests.helpers.http import Http
from tests.helpers.panel import bench, fake, setup_bench, stream_chunks, stream_text  # noqa: F401
from tests.helpers.suite import Oracle, plant, wait_run

pytest.importorskip("llm", reason="the llm package (pyproject's test extra) is not installed")
ROOT = Path(__file__).resolve().parent.parent
SERVED = ["m-a", "m-b", "m-c", "m-x", "m-y", "m-z", "m-merge"]


def llm_knows(upstream, names, tools: bool = False) -> None:
    """Tell llm about OpenAI-compatible models at the fake (JSON is YAML too)."""
    folder = Path(os.environ["LLM_USER_PATH"])
    folder.mkdir(parents=True, exist_ok=True)
    entries = [{"model_id": n, "model_name": n, "api_base": upstream.url, "supports_tools": tools} for n in names]
    (folder / "extra-openai-models.yaml").write_text(json.dumps(entries), encoding="utf-8")


def by_llm(upstream) -> bool:
    agents = {r.headers.get("user-agent", "") for r in upstream.requests if r.path.endswith("/chat/completions")}
    return bool(agents) and all(a.startswith("OpenAI/Python") for a in agents)


@pytest.fixture
def via_llm(home, fake, monkeypatch, make_service):
    setup_bench(home, fake)
    llm_knows(fake, SERVED, tools=True)
    monkeypatch.setenv("BENCH_CLIENT", "llm")
    return make_service()


def ask_core(url: str, **extra) -> dict:
    status, _, d = Http(url)("POST", "/v1/chat/completions", {"model": "bench/core", "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Where is the bug?"}], **extra})
    assert status == 200, d
    return d


def test_a_panel_and_its_merge_are_answered_through_llm(via_llm, fake):
    d = ask_core(via_llm.url, max_tokens=77)
    assert [s["status"] for s in d["bench"]["seats"]] == ["ok"] * 4
    assert "m-a says: Where is the bug?" in d["choices"][0]["message"]["content"]
    assert by_llm(fake)
    sent = [r.body for r in fake.requests if r.body and r.body.get("model") == "m-a"][-1]
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."} and sent["max_tokens"] == 77
    _, _, calls = Http(via_llm.url)("GET", "/bench/calls?collection=core")
    assert all(c["output_tokens"] > 0 for c in calls["calls"])              # the plugin's usage, recorded
    status, _, merged = Http(via_llm.url)("POST", "/v1/chat/completions", {
        "model": "bench/core:merged", "messages": [{"role": "user", "content": "hi"}]})
    assert status == 200 and merged["bench"]["merge"]["status"] == "ok"


def test_route_mode_streams_a_tool_call_through_llm_and_takes_its_result(via_llm, fake):
    write(Path(os.environ["BENCHWARMERS_HOME"]), "models.json", {"models": {
        "a": {"endpoint": "fake", "served": "m-a", "facts": {"tools": True}}}})
    write(Path(os.environ["BENCHWARMERS_HOME"]), "collections.json", {"collections": {
        "agents": {"members": ["a"], "explore": 0}}})
    fake.script("m-a", [Reply.tool("read_file", {"path": "app.py"}), Reply(text="It is on line 3.")])
    tool = {"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                             "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}
    body = {"model": "bench/agents:route", "tools": [tool], "messages": [{"role": "user", "content": "Find the bug."}]}
    chunks = [c for c in stream_chunks(via_llm.url, body) if isinstance(c, dict) and c.get("choices")]
    calls = [c for ch in chunks for c in ch["choices"][0]["delta"].get("tool_calls") or []]
    assert calls[0]["function"]["name"] == "read_file"
    assert json.loads("".join(c["function"].get("arguments") or "" for c in calls)) == {"path": "app.py"}
    assert [ch["choices"][0]["finish_reason"] for ch in chunks][-1] == "tool_calls"
    call_id = calls[0]["id"]
    body["messages"] += [{"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "read_file", "arguments": '{"path": "app.py"}'}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "x = 1 / 0"}]
    assert stream_text(stream_chunks(via_llm.url, body)) == "It is on line 3."
    sent = fake.requests[-1].body["messages"]
    assert sent[-1] == {"role": "tool", "tool_call_id": call_id, "content": "x = 1 / 0"} and by_llm(fake)
    assert sent[-2]["tool_calls"][0]["function"]["name"] == "read_file"


def test_the_setting_chooses_llm_and_the_environment_wins(home, fake, make_service, monkeypatch):
    setup_bench(home, fake, settings={"client": "llm"})
    llm_knows(fake, SERVED)
    svc = make_service()
    ask_core(svc.url)
    assert by_llm(fake)
    fake.requests.clear()
    monkeypatch.setenv("BENCH_CLIENT", "builtin")            # read at each call: the environment wins
    ask_core(svc.url)
    assert {r.headers["user-agent"].split("/")[0] for r in fake.requests} == {"benchwarmers"}
    _, _, s = Http(svc.url)("GET", "/bench/settings")
    assert s["client"]["in_use"] == "builtin" and s["client"]["chosen_by"] == "BENCH_CLIENT"


def test_a_probe_goes_through_llm(via_llm, fake):
    status, _, d = Http(via_llm.url)("POST", "/bench/models/a/probe")
    assert status == 200 and d["probe"]["status"] == "ok" and by_llm(fake)


def test_a_suite_run_asks_through_llm(home, make_service, monkeypatch):
    oracle = Oracle(plant(home)).start()
    try:
        setup_bench(home, oracle, collections={}, settings={"suite_gap_seconds": 0}, right=("fake", "right"))
        llm_knows(oracle, ["right"])
        monkeypatch.setenv("BENCH_CLIENT", "llm")
        http = Http(make_service().url)
        _, _, d = http("POST", "/bench/suite/runs", {"model": "right", "tasks": "t-claim-*"})
        results = wait_run(http, d["runs"][0]["id"])["results"]
        assert [r["outcome"] for r in results] == ["right", "right"] and by_llm(oracle)
    finally:
        oracle.stop()


def test_a_model_llm_does_not_know_fails_its_seat_clearly_and_is_never_retired(home, fake, make_service,
                                                                               monkeypatch):
    setup_bench(home, fake)
    llm_knows(fake, [n for n in SERVED if n != "m-b"])
    monkeypatch.setenv("BENCH_CLIENT", "llm")
    svc = make_service()
    seats = {s["model"]: s for s in ask_core(svc.url)["bench"]["seats"]}
    assert seats["b"]["status"] == "failed" and "llm knows no model 'm-b'" in seats["b"]["error"]
    assert "llm models" in seats["b"]["error"] and seats["a"]["status"] == "ok"
    _, _, d = Http(svc.url)("POST", "/bench/models/b/probe")
    assert d["probe"]["status"] == "failed" and d["retired"] is False       # the client's fault, not the model's


def test_llm_chosen_but_not_installed_says_so(bench, fake, monkeypatch):
    monkeypatch.setitem(sys.modules, "llm", None)       # `import llm` now fails, as where it is not installed
    monkeypatch.setenv("BENCH_CLIENT", "llm")
    status, _, d = Http(bench.url)("POST", "/v1/chat/completions", {"model": "a", "messages": [
        {"role": "user", "content": "hi"}]})
    assert status == 502 and "the llm package is not installed in the Python that runs Benchwarmers" in \
        d["error"]["message"] and "pip install llm" in d["error"]["message"]
    assert not fake.requests
    _, _, page = Http(bench.url)("GET", "/settings.json")
    assert "not installed" in page["client"]["problem"] and page["client"]["in_use"] == "llm"


def test_errors_carry_their_kind_and_a_stall_is_a_timeout(fake, monkeypatch):
    llm_knows(fake, ["m-a"])
    ask = Ask(messages=[Message("user", [Text("hi")])])
    fake.expect_key("sk-the-right-one-123456")            # llm sends no key to an api_base model: refused
    with pytest.raises(UpstreamFailed) as refused:
        LlmCalls("fake").complete(ask, "m-a")
    assert refused.value.kind is FaultKind.AUTH and refused.value.upstream_status == 401
    assert refused.value.message.startswith("llm model 'm-a' (endpoint 'fake'): HTTP 401")
    fake.expect_key(None)
    fake.script("m-a", Reply(stall=True, stall_after=1))
    with pytest.raises(UpstreamFailed) as stalled:
        LlmCalls("fake").complete(ask, "m-a", timeouts=Timeouts(connect=0.5, first_byte=1, idle=1))
    assert stalled.value.kind is FaultKind.TIMEOUT


def test_a_rate_limit_through_llm_says_whether_it_is_the_models_or_the_keys(fake):
    """So it rests what it names: the model asked (a bare Retry-After), or the whole endpoint (OpenRouter's
    unit-less x-ratelimit-* count the key's requests over every model)."""
    llm_knows(fake, ["m-a"])
    ask = Ask(messages=[Message("user", [Text("hi")])])
    for style, scope in (("retry_after", MODEL), ("openrouter", KEY)):
        fake.script("m-a", Reply.error(429, style=style, retry_after=0.1))    # every try, the SDK's retries too
        with pytest.raises(UpstreamFailed) as limited:
            LlmCalls("fake").complete(ask, "m-a")
        assert limited.value.kind is FaultKind.RATE_LIMITED and limited.value.scope == scope, style
        assert limited.value.reset_at, style


def test_the_settings_page_says_who_calls_members_and_what_llm_leaves_out(via_llm):
    from benchwarmers.providers.llmcalls import NOT_COVERED
    status, _, html = Http(via_llm.url)("GET", "/settings")
    assert status == 200 and "Member calls" in html and "the llm package (llm " in html
    for gap in NOT_COVERED:
        assert gap.split(":")[0] in html
    gateway = (ROOT / "GATEWAY.md").read_text(encoding="utf-8")
    for gap in NOT_COVERED:                                 # the docs say the same, word for word
        assert gap in " ".join(gateway.split()), gap


def test_serve_refuses_a_client_it_does_not_know(tmp_path):
    env = {**os.environ, "BENCH_CLIENT": "litellm", "BENCHWARMERS_HOME": str(tmp_path / "d"),
           "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "benchwarmers", "serve", "--port", "0", "--no-browser"], env=env,
                         cwd=str(ROOT), stdin=subprocess.DEVNULL, capture_output=True, text=True, encoding="utf-8",
                         timeout=60)
    assert out.returncode == 2 and "BENCH_CLIENT must be one of builtin, llm, not 'litellm'" in out.stderr
