"""The golden translation suite: documented client requests through route mode into a fake member, and back.

Each tests/golden/<name>.json holds: client_format, client_path, client_request (a documented example body),
member_api, upstream_reply (a fakes.Reply spec), expected_upstream_path and expected_upstream_request (what the
fake must receive: every key given must match, lists in full), optional expected_upstream_headers, and
expected_client_events ([event, key fields] as the client sees them, ids that we make up shown as placeholders).

    BENCH_GOLDEN_REGEN=1 python -m pytest tests/test_golden.py     # rewrite the expected_* parts from what
                                                                    # the service does now; then review the diff
"""
from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.fakes import FAKES, Reply
from tests.helpers.route import route_collection

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(GOLDEN.glob("*.json"))
REGEN = os.environ.get("BENCH_GOLDEN_REGEN") == "1"
EXPECTED = ("expected_upstream_path", "expected_upstream_request", "expected_client_events")
# ids and names we make up, shown as placeholders so the goldens stay stable
VOLATILE = [(re.compile(r"^call_[0-9a-f]{24}$"), "<made-up call id>"),
            (re.compile(r"^(msg_|chatcmpl-|resp_|fc_|rs_|toolu_)[0-9a-f]{24,32}$"), "<id>")]
SKIP_KEYS = {"created", "created_at", "system_fingerprint", "total_duration", "load_duration", "prompt_eval_duration",
             "eval_duration", "responseId", "bench", "logprobs"}


def post(url: str, body: dict, headers: dict) -> tuple[int, str, bytes]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


# ---- what the client saw, as (event, key fields) ----------------------------------------------

def frames(ctype: str, raw: bytes) -> list[tuple[str | None, object]]:
    """(SSE event name, data) per frame; NDJSON lines as (None, data); a whole body as ("body", data)."""
    text = raw.decode("utf-8")
    if "event-stream" in ctype:
        out = []
        for block in text.replace("\r\n", "\n").split("\n\n"):
            lines = block.splitlines()
            event = next((x[6:].strip() for x in lines if x.startswith("event:")), None)
            data = "\n".join(x[5:].strip() for x in lines if x.startswith("data:"))
            if data:
                out.append((event, data if data == "[DONE]" else json.loads(data)))
        return out
    if "ndjson" in ctype:
        return [(None, json.loads(line)) for line in text.splitlines() if line.strip()]
    return [("body", json.loads(text))]


def keep(d: dict, *keys: str) -> dict:
    return {k: d[k] for k in keys if k in d}


def key_fields(fmt: str, event, data):
    """The fields of one client-visible event that a translation can get wrong."""
    if not isinstance(data, dict):
        return data
    if fmt == "anthropic":
        if event == "body":
            return keep(data, "role", "model", "content", "stop_reason", "usage")
        if event == "message_start":
            return keep(data["message"], "model", "usage")
        return {k: v for k, v in data.items() if k != "type"}
    if fmt == "openai_chat":
        if not data.get("choices"):
            return keep(data, "usage", "error")
        choice = data["choices"][0]
        got = keep(choice, "delta", "message", "finish_reason")
        return dict(got, usage=data["usage"]) if event == "body" else got
    if fmt == "openai_responses":
        if event == "body" or data.get("type") == "response.completed":
            resp = data.get("response", data)
            return keep(resp, "status", "output", "usage", "incomplete_details")
        if data.get("type") in ("response.created", "response.in_progress"):
            return {"status": data["response"]["status"]}
        return {k: v for k, v in data.items() if k not in ("type", "sequence_number", "item_id")}
    if fmt == "gemini":
        candidate = data["candidates"][0] if data.get("candidates") else {}
        got = {"parts": candidate.get("content", {}).get("parts")}
        got.update(keep(candidate, "finishReason"))
        got.update(keep(data, "usageMetadata", "error"))
        return got
    return keep(data, "message", "response", "done", "done_reason", "prompt_eval_count", "eval_count", "error")


def scrub(value):
    """Made-up ids become placeholders; timestamps and our own `bench` object go."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if k not in SKIP_KEYS}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        for pattern, placeholder in VOLATILE:
            if pattern.match(value):
                return placeholder
    return value


def client_events(fmt: str, ctype: str, raw: bytes) -> list:
    out = []
    for event, data in frames(ctype, raw):
        name = event if event is not None else (data.get("type") if isinstance(data, dict) and fmt ==
                                                "openai_responses" else None)
        out.append([name, scrub(key_fields(fmt, event, data))])
    return out


# ---- comparing --------------------------------------------------------------------------------

def mismatch(expected, actual, where: str = "$") -> str | None:
    """Where `actual` departs from `expected`: every key of an expected object must match; lists in full."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where}: expected an object, got {json.dumps(actual)[:200]}"
        for k, v in expected.items():
            if k not in actual:
                return f"{where}.{k}: missing (expected {json.dumps(v)[:200]})"
            problem = mismatch(v, actual[k], f"{where}.{k}")
            if problem:
                return problem
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{where}: expected {json.dumps(expected)[:300]}, got {json.dumps(actual)[:300]}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            problem = mismatch(e, a, f"{where}[{i}]")
            if problem:
                return problem
        return None
    if expected != actual:
        return f"{where}: expected {json.dumps(expected)}, got {json.dumps(actual)}"
    return None


# ---- the suite --------------------------------------------------------------------------------

def test_goldens_exist_and_name_their_source():
    assert len(CASES) >= 15
    for path in CASES:
        case = json.loads(path.read_text(encoding="utf-8"))
        assert case.get("source", "").startswith("https://"), f"{path.name}: say which documented example it is"
        assert all(k in case for k in EXPECTED), f"{path.name}: run with BENCH_GOLDEN_REGEN=1, then review"


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden(service, home, path):
    case = json.loads(path.read_text(encoding="utf-8"))
    api = case["member_api"]
    fake = FAKES[api]().start()
    try:
        route_collection(home, {api: fake}, [("m", api)])
        fake.script("m-s", Reply(**case["upstream_reply"]))
        status, ctype, raw = post(service.url + case["client_path"], case["client_request"],
                                  case.get("client_headers", {}))
        assert status == 200, raw[:500]
        sent = fake.last
        actual = {"expected_upstream_path": sent.path + ("?" + "&".join(f"{k}={v}" for k, v in sent.query.items())
                                                         if sent.query else ""),
                  "expected_upstream_request": sent.body,
                  "expected_client_events": client_events(case["client_format"], ctype, raw)}
    finally:
        fake.stop()
    if REGEN:
        case.update(actual)
        path.write_text(json.dumps(case, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        pytest.skip(f"{path.name} regenerated: review the diff before committing")
    for key in EXPECTED:
        problem = mismatch(case[key], actual[key])
        assert problem is None, f"{path.name} {key} {problem}"
    for name, value in case.get("expected_upstream_headers", {}).items():
        assert sent.headers.get(name) == value, f"{path.name}: upstream header {name}"
