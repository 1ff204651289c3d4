"""Tokens a sign-in gave are renewed before they expire: with the refresh token, once for two processes (a file
lock), and a refused renewal marks the endpoint "sign in again" so seating passes its models over."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from benchwarmers.canonical import Ask, Message, Text
from benchwarmers.roster.registry import Model
from benchwarmers.signin import renewal
from tests.fakes.appsignin import FakeHuggingFace
from tests.helpers.panel import wait_for
from tests.helpers.signin import pointed_at
from tests.test_connect import Browser, keys_json, result_of, start
from tests.test_connect_apps import github, hf_round_trip, poll, signins, use_app  # noqa: F401 (github: a fixture)

CHECKOUT = Path(__file__).resolve().parents[1]


def signed_in(service, http, fake) -> None:
    use_app(http, "huggingface")
    status, headers, _ = hf_round_trip(Browser(), service, fake)
    assert result_of(http, status, headers)["ok"]


def due(config, endpoint: str, seconds: float) -> None:
    """Move the endpoint's expiry to `seconds` from now."""
    config.update(renewal.FILE, lambda d: d["endpoints"][endpoint].__setitem__("expires", time.time() + seconds))


@contextmanager
def hugging_face():
    """A fake Hugging Face, and the provider's URLs pointed at it, for the block."""
    with FakeHuggingFace() as fake, pointed_at("huggingface", authorize_url=fake.root + "/oauth/authorize",
                                               token_url=fake.root + "/oauth/token", base_url=fake.url):
        fake.set_models(["Qwen/Qwen3-32B"])
        yield fake


def test_a_token_due_soon_is_renewed_with_the_refresh_token_before_the_call(service, http, isolated):
    with hugging_face() as fake:
        signed_in(service, http, fake)
        bench = service.bench
        old_refresh = keys_json(isolated)["huggingface.refresh"]
        endpoint = bench.registry.endpoint("huggingface")
        bench.registry.provider(endpoint)
        assert fake.refreshes == []                      # an hour left: nothing to do
        due(bench.config, "huggingface", 60)
        provider = bench.registry.provider(endpoint)
        assert len(fake.refreshes) == 1 and fake.refreshes[0]["refresh_token"] == old_refresh
        stored = keys_json(isolated)
        assert stored["huggingface"] == fake.issued[1] and stored["huggingface.refresh"] != old_refresh
        assert signins(isolated)["huggingface"]["expires"] > time.time() + 3000
        assert [m["id"] for m in provider.list_models()] == ["Qwen/Qwen3-32B"]    # the new token is the one sent
        assert fake.last.headers["authorization"] == f"Bearer {fake.issued[1]}"


def test_a_refused_renewal_says_sign_in_again_and_seating_passes_the_models_over(service, http, isolated):
    with hugging_face() as fake:
        signed_in(service, http, fake)
        bench = service.bench
        bench.registry.save_model(Model("qwen", "huggingface", "Qwen/Qwen3-32B"))
        fake.refuse_refresh = True
        due(bench.config, "huggingface", -10)
        bench.registry.provider(bench.registry.endpoint("huggingface"))
        assert len(fake.refreshes) == 1
        kept = signins(isolated)["huggingface"]
        assert kept["refused"].startswith("sign in again") and "invalid" in kept["refused"]
        _, _, listed = http("GET", "/bench/endpoints")
        view = listed["endpoints"][0]
        assert "sign in again" in view["state"] and view["signin"]["refused"]
        ask = Ask(messages=[Message("user", [Text("hello")])])
        why = bench.seating.why_not(bench.registry.model("qwen"), ask, 10)
        assert "needs you to sign in again" in why
        bench.registry.provider(bench.registry.endpoint("huggingface"))
        assert len(fake.refreshes) == 1                  # refused once: not asked again on every call
        fake.refuse_refresh = False
        signed_in(service, http, fake)                   # signing in again clears it
        assert signins(isolated)["huggingface"]["refused"] is None
        assert bench.seating.why_not(bench.registry.model("qwen"), ask, 10) is None
        _, _, listed = http("GET", "/bench/endpoints")
        assert listed["endpoints"][0]["state"] == "ok"


@pytest.mark.parametrize("down", [503, 429])
def test_a_provider_that_does_not_answer_the_renewal_is_tried_again_later(service, http, isolated, down):
    bench = service.bench
    with hugging_face() as fake:
        signed_in(service, http, fake)
        renewer, endpoint = bench.registry.tokens, bench.registry.endpoint("huggingface")
        token = keys_json(isolated)["huggingface"]
        fake.refresh_down, fake.down_status = 1, down
        due(bench.config, "huggingface", 60)
        bench.registry.provider(endpoint)                # a 503 or a 429: the token still works for another minute
        assert len(fake.refreshes) == 1 and keys_json(isolated)["huggingface"] == token
        assert signins(isolated)["huggingface"]["refused"] is None
        bench.registry.provider(endpoint)
        assert len(fake.refreshes) == 1                  # not asked again on every call
        renewer.clock = lambda: time.time() + renewal.RETRY + 1
        bench.registry.provider(endpoint)                # later: asked again, and renewed
        assert len(fake.refreshes) == 2 and keys_json(isolated)["huggingface"] == fake.issued[-1] != token
        gone = fake.root + "/oauth/token"
    with pointed_at("huggingface", token_url=gone):      # nothing listens there now
        due(bench.config, "huggingface", 60)
        bench.registry.provider(endpoint)
        assert signins(isolated)["huggingface"]["refused"] is None
        assert keys_json(isolated)["huggingface"] == fake.issued[-1]


def test_a_provider_that_keeps_its_refresh_token_is_renewed_with_it_again(service, http, isolated):
    bench = service.bench
    with hugging_face() as fake:
        signed_in(service, http, fake)
        fake.rotate = False
        first = keys_json(isolated)["huggingface.refresh"]
        for n in (1, 2):
            due(bench.config, "huggingface", 60)
            bench.registry.provider(bench.registry.endpoint("huggingface"))
            assert len(fake.refreshes) == n and fake.refreshes[-1]["refresh_token"] == first
            assert keys_json(isolated)["huggingface"] == fake.issued[-1]
        kept = signins(isolated)["huggingface"]
        assert kept["refreshable"] and kept["refused"] is None and keys_json(isolated)["huggingface.refresh"] == first


def test_github_renews_with_the_apps_client_secret_and_a_wrong_one_says_sign_in_again(service, http, isolated,
                                                                                     github):
    secret = "gh-app-secret-0123456789"
    use_app(http, "github", client_secret=secret)
    github.client_secret = secret
    browser = Browser()
    location = start(browser, service, "github")
    github.approve_all()
    status, headers, _ = poll(browser, service, location)
    assert result_of(http, status, headers)["ok"]
    bench = service.bench
    due(bench.config, "github", 60)
    bench.registry.provider(bench.registry.endpoint("github"))
    sent = github.refreshes[-1]
    assert sent["client_secret"] == secret and sent["grant_type"] == "refresh_token"
    assert keys_json(isolated)["github"] == github.issued[-1] and len(github.issued) == 2
    use_app(http, "github", client_secret="not-the-apps-secret")
    due(bench.config, "github", 60)
    bench.registry.provider(bench.registry.endpoint("github"))
    kept = signins(isolated)["github"]
    assert kept["refused"].startswith("sign in again") and "incorrect" in kept["refused"]
    assert [p for p in isolated.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()] == []


RENEW = textwrap.dedent("""
    import sys, time
    from dataclasses import replace
    from pathlib import Path
    from benchwarmers.signin import vendors, renewal
    from benchwarmers import keys
    from benchwarmers.store import Config
    vendors._table["huggingface"] = replace(vendors._table["huggingface"], token_url=sys.argv[2])
    home, go = Path(sys.argv[1]), Path(sys.argv[3])
    renewer = renewal.Renewer(Config(home), None, home)
    Path(sys.argv[4]).write_text("ready")
    while not go.exists():
        time.sleep(0.005)
    renewer.fresh("huggingface")
    print(keys.get("huggingface")[0])
""")


def test_two_processes_renew_once_with_a_refresh_token_that_works_once(service, http, isolated, tmp_path):
    with hugging_face() as fake:
        signed_in(service, http, fake)
        due(service.bench.config, "huggingface", 30)
        go = tmp_path / "go"
        env = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
        ready = [tmp_path / f"ready-{i}" for i in range(2)]
        procs = [subprocess.Popen([sys.executable, "-c", RENEW, str(isolated), fake.root + "/oauth/token", str(go),
                                   str(r)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                 for r in ready]
        wait_for(lambda: all(r.exists() for r in ready), timeout=60)
        go.write_text("go")           # both are waiting: they renew at once
        outs = [p.communicate(timeout=60) for p in procs]
        assert all(p.returncode == 0 for p in procs), outs
        assert len(fake.refreshes) == 1                        # the second process found it renewed already
        assert {o[0].strip() for o in outs} == {fake.issued[1]}
        assert signins(isolated)["huggingface"]["refused"] is None
