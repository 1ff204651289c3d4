"""Hubs over real HTTP against fakes that follow each hub's source: adding one with its admin key, the onboarding
queue adding a model through the hub's admin API and onboarding it, refusals (bad admin key, model there already,
hub down), Discover's routes through a hub, and retiring that leaves the hub alone unless asked."""
from __future__ import annotations

import io
import json

import pytest

from benchwarmers.redaction import redact
from tests.fakes.hubs import API_KEY, UPSTREAM_KEY, FakeCLIProxy, FakeLiteLLM, FakeOpenWebUI
from tests.helpers.catalog import install_samples
from tests.helpers.dashboard import Session
from tests.helpers.panel import wait_for

OR_BASE = "https://openrouter.ai/api/v1"
ADMIN = "admin-key-0123"


def litellm():
    fake = FakeLiteLLM(admin_key=ADMIN).start()
    fake.deploy("llama-3.3-70b", "openrouter/meta-llama/llama-3.3-70b-instruct")
    return fake, "litellm", "openrouter"


def cliproxy():
    fake = FakeCLIProxy(admin_key=ADMIN).start()
    fake.entry("openrouter", OR_BASE, ["meta-llama/llama-3.3-70b-instruct"])
    fake.lag = 1                           # its config reloads after the save, in the background
    return fake, "cliproxy", "openrouter"


def openwebui():
    fake = FakeOpenWebUI(admin_key=ADMIN).start()
    fake.connection(OR_BASE, ["meta-llama/llama-3.3-70b-instruct", "qwen/qwen3-coder:free"],
                    model_ids=["meta-llama/llama-3.3-70b-instruct"])
    return fake, "open-webui", "0"


HUBS = {"litellm": litellm, "cliproxy": cliproxy, "open-webui": openwebui}


@pytest.fixture(params=list(HUBS))
def hub(request):
    fake, kind, via = HUBS[request.param]()
    yield fake, kind, via
    fake.stop()


def add_hub(http, fake, kind, admin=ADMIN, name="myhub"):
    body = {"name": name, "base_url": fake.url, "key": API_KEY, "hub": kind}
    if admin is not None:
        body["admin_key"] = admin
    return http("POST", "/bench/endpoints", body)


def keys_json(isolated) -> dict:
    path = isolated.parent / "llm" / "keys.json"
    return json.loads(path.read_text()) if path.exists() else {}


def onboarded(http, served: str, via: str | None, endpoint: str = "myhub") -> dict:
    status, _, d = http("POST", "/bench/onboard", {"models": [{"served": served, "endpoint": endpoint, "via": via}],
                                                   "mode": "adhoc"})
    assert status == 202, d
    item_id = d["items"][0]["id"]
    return wait_for(lambda: (lambda i: i if i["state"] in ("done", "failed") else None)(
        http("GET", f"/bench/onboard/{item_id}")[2]), timeout=60)


def test_a_hub_is_added_with_its_admin_key_kept_apart(service, http, isolated, hub):
    fake, kind, _ = hub
    status, _, d = add_hub(http, fake, kind)
    assert status == 201, d
    view = d["endpoint"]
    assert view["hub"] == kind and view["admin_key_source"] == "keys.json" and view["sources"]
    stored = keys_json(isolated)
    assert stored["myhub"] == API_KEY and stored["myhub.admin"] == ADMIN
    assert [p for p in isolated.rglob("*") if p.is_file() and ADMIN.encode() in p.read_bytes()] == []
    _, _, listed = http("GET", "/bench/endpoints")
    assert ADMIN not in json.dumps(listed) and listed["endpoints"][0]["hub"] == kind
    status, _, d = http("GET", "/bench/endpoints/myhub/hub")
    assert status == 200 and d["hub"] == kind and d["sources"][0]["provider"] == "openrouter"
    if kind != "litellm":              # its admin API showed the upstream's key (LiteLLM's leaves it out)
        assert redact(f"the hub said {UPSTREAM_KEY}") == "the hub said [redacted]"
        assert UPSTREAM_KEY not in json.dumps(d)
    assert http("DELETE", "/bench/endpoints/myhub")[0] == 200     # its admin key goes with it; its key stays
    assert "myhub.admin" not in keys_json(isolated) and keys_json(isolated)["myhub"] == API_KEY
    status, _, d = http("POST", "/bench/endpoints", {"name": "myhub", "base_url": fake.url, "key": API_KEY,
                                                     "hub": kind})
    assert status == 400 and "needs its admin key" in d["error"]["message"], d


def test_a_bad_admin_key_or_a_hub_that_is_down_adds_nothing(service, http, isolated, hub):
    fake, kind, _ = hub
    status, _, d = add_hub(http, fake, kind, admin="not-the-admin-key")
    assert status >= 400 and "refused the admin key" in d["error"]["message"], d
    status, _, d = add_hub(http, fake, kind, admin=None)
    assert status == 400 and "admin key" in d["error"]["message"]
    assert "myhub" not in keys_json(isolated) and http("GET", "/bench/endpoints")[2]["endpoints"] == []
    for kind_given in ("nonesuch", ["litellm"], {"kind": "litellm"}, 3, "x" * 5000):
        status, _, d = http("POST", "/bench/endpoints", {"name": "x", "base_url": fake.url, "key": API_KEY,
                                                         "hub": kind_given, "admin_key": ADMIN})
        assert status == 400 and "Unknown hub kind" in d["error"]["message"], (kind_given, d)
        assert len(d["error"]["message"]) < 200
    url = fake.url
    fake.stop()
    status, _, d = http("POST", "/bench/endpoints", {"name": "myhub", "base_url": url, "key": API_KEY, "hub": kind,
                                                     "admin_key": ADMIN})
    assert status >= 400 and http("GET", "/bench/endpoints")[2]["endpoints"] == []


def test_the_endpoints_form_adds_a_hub_with_its_admin_key(service, http, isolated):
    fake, kind, _ = litellm()
    try:
        s = Session(service.url)
        _, _, page = s.get("/endpoints")
        assert 'name="hub"' in page and 'name="admin_key"' in page and 'value="litellm"' in page
        fields = {"api": "openai", "name": "myhub", "base_url": fake.url, "key": API_KEY, "hub": kind}
        status, _, _ = s.form("/endpoints/add", {**fields, "admin_key": "not-the-admin-key"})
        _, _, page = s.get("/endpoints")
        assert status == 303 and "refused the admin key" in page and "not-the-admin-key" not in page
        assert http("GET", "/bench/endpoints")[2]["endpoints"] == []
        status, _, _ = s.form("/endpoints/add", {**fields, "admin_key": ADMIN})
        _, _, page = s.get("/endpoints")
        assert status == 303 and "Added endpoint myhub" in page and "hub: LiteLLM proxy" in page
        assert ADMIN not in page and keys_json(isolated)["myhub.admin"] == ADMIN
        assert http("GET", "/bench/endpoints")[2]["endpoints"][0]["hub"] == "litellm"
    finally:
        fake.stop()


def test_no_endpoint_takes_the_name_of_an_entry_kept_beside_a_key(service, http, isolated):
    for name in ("myhub.admin", "huggingface.refresh", "github.app-secret"):
        status, _, d = http("POST", "/bench/endpoints", {"name": name, "base_url": "http://127.0.0.1:9/v1", "key": "k"})
        assert status == 400 and "ends like an entry kept beside" in d["error"]["message"], d
    assert keys_json(isolated) == {}


def test_the_queue_adds_a_model_to_the_hub_reads_it_back_and_onboards_it(service, http, isolated, hub):
    fake, kind, via = hub
    assert add_hub(http, fake, kind)[0] == 201
    served = "qwen/qwen3-coder:free"
    assert served not in fake.listed()
    item = onboarded(http, served, via)
    assert item["state"] == "done", (item["reason"], item["log_lines"])
    assert any("through its admin API" in line for line in item["log_lines"])
    assert served in fake.listed() and item["model"]
    model = http("GET", f"/bench/models/{item['model']}")[2]["model"]
    assert model["endpoint"] == "myhub" and model["served"] == served
    if kind == "litellm":
        params = fake.added[0]["litellm_params"]
        assert params == {"model": "openrouter/" + served, "api_key": "os.environ/OPENROUTER_API_KEY"}
    if kind == "open-webui":
        assert served in fake.configs["0"]["model_ids"] and served in fake.records
    sent = [json.dumps(r.body) for r in fake.writes]
    assert not [s for s in sent if API_KEY in s or ADMIN in s]
    writes = len(fake.writes)
    already = "llama-3.3-70b" if kind == "litellm" else "meta-llama/llama-3.3-70b-instruct"
    item = onboarded(http, already, via)                                 # listed already: no admin write
    assert item["state"] == "done" and len(fake.writes) == writes


def test_a_model_the_hub_has_under_that_name_is_not_added_twice(service, http):
    fake = FakeLiteLLM(admin_key=ADMIN).start()
    try:
        fake.deploy("llama-3.3-70b", "openrouter/meta-llama/llama-3.3-70b-instruct")
        assert add_hub(http, fake, "litellm")[0] == 201
        hub_admin = __import__("benchwarmers.hubs", fromlist=["adapter"])
        endpoint = service.bench.registry.endpoint("myhub")
        adapter = hub_admin.adapter(endpoint)
        source = adapter.sources()[0]
        assert adapter.add("llama-3.3-70b", source) == "llama-3.3-70b" and fake.added == []
        fake2 = FakeOpenWebUI(admin_key=ADMIN).start()
        try:
            fake2.connection(OR_BASE, ["m-one"])
            fake2.records["m-one"] = {"id": "m-one"}            # a record there already: Open WebUI says taken
            assert add_hub(http, fake2, "open-webui", name="owui")[0] == 201
            owui = hub_admin.adapter(service.bench.registry.endpoint("owui"))
            assert owui.add("m-one", owui.sources()[0]) == "m-one"
        finally:
            fake2.stop()
    finally:
        fake.stop()


def test_refusals_on_the_way_fail_the_item_with_the_hubs_words(service, http, isolated):
    fake = FakeLiteLLM(admin_key=ADMIN).start()
    try:
        fake.deploy("llama-3.3-70b", "openrouter/meta-llama/llama-3.3-70b-instruct")
        assert add_hub(http, fake, "litellm")[0] == 201
        fake.store_model_in_db = False
        item = onboarded(http, "qwen/qwen3-coder:free", "openrouter")
        assert item["state"] == "failed" and "STORE_MODEL_IN_DB" in item["reason"]
        fake.store_model_in_db = True
        fake.admin_key = "rotated"
        item = onboarded(http, "qwen/qwen3-coder:free", "openrouter")
        assert item["state"] == "failed" and "refused the admin key" in item["reason"]
        fake.admin_key = ADMIN
        item = onboarded(http, "qwen/qwen3-coder:free", "groq")
        assert item["state"] == "failed" and "no source 'groq'" in item["reason"]
        assert http("POST", "/bench/endpoints", {"name": "plain", "base_url": fake.url, "key": API_KEY})[0] == 201
        for where in ({}, {"endpoint": "plain"}):       # a via with no hub to take it is said, not passed over
            status, _, d = http("POST", "/bench/onboard", {"models": ["llama-3.3-70b"], "via": "openrouter",
                                                           "mode": "adhoc", **where})
            assert status == 400 and "not onboarded through a hub" in d["error"]["message"], d
    finally:
        fake.stop()
    item = onboarded(http, "qwen/qwen3-coder:free", "openrouter")        # the hub is down
    assert item["state"] == "failed"


def test_odd_shapes_in_a_hubs_admin_answer_are_no_500(service, http):
    fake = FakeLiteLLM(admin_key=ADMIN).start()
    fake2 = FakeCLIProxy(admin_key=ADMIN).start()
    try:
        fake.deploy("odd", "no-slash-model")
        fake.deployments[0]["model_info"]["litellm_provider"] = ["openrouter"]      # not a provider's name
        fake.deploy("llama-3.3-70b", "openrouter/meta-llama/llama-3.3-70b-instruct")
        status, _, d = add_hub(http, fake, "litellm")
        assert status == 201 and [s["id"] for s in d["endpoint"]["sources"]] == ["openrouter"], d
        fake2.entry("openrouter", OR_BASE, [])
        fake2.entries[0].update({"models": 5, "api-key-entries": 7})
        status, _, d = add_hub(http, fake2, "cliproxy", name="cpa")
        assert status == 201, d
        item = onboarded(http, "m-new", "openrouter", endpoint="cpa")
        assert item["state"] == "done", item["reason"]
        assert fake2.entries[0]["models"] == [{"name": "m-new", "alias": "m-new"}]
    finally:
        fake.stop()
        fake2.stop()


def test_cli_proxy_management_switched_off_is_named(service, http):
    fake = FakeCLIProxy(admin_key=ADMIN).start()
    try:
        fake.entry("openrouter", OR_BASE, ["m-one"])
        fake.management = False
        status, _, d = add_hub(http, fake, "cliproxy")
        assert status >= 400 and "no such admin route" in d["error"]["message"]
    finally:
        fake.stop()


def test_retiring_leaves_the_hub_alone_unless_asked(service, http):
    fake = FakeCLIProxy(admin_key=ADMIN).start()
    try:
        fake.entry("openrouter", OR_BASE, ["m-one", "m-two"])
        assert add_hub(http, fake, "cliproxy")[0] == 201
        for served in ("m-one", "m-two"):
            assert onboarded(http, served, None)["state"] == "done"
        models = {m["served"]: m["alias"] for m in http("GET", "/bench/models")[2]["models"]}
        status, _, d = http("POST", f"/bench/models/{models['m-one']}/retire", {"reason": "slow"})
        assert status == 200 and d["hub"] is None and "m-one" in fake.listed()
        status, _, d = http("POST", f"/bench/models/{models['m-two']}/retire", {"reason": "gone", "from_hub": True})
        assert status == 200 and d["hub"] == {"endpoint": "myhub", "removed": True}
        assert "m-two" not in [m["name"] for m in fake.entries[0]["models"]]
        assert http("POST", f"/bench/models/{models['m-one']}/retire", {"from_hub": "yes"})[0] == 400
    finally:
        fake.stop()


@pytest.mark.parametrize("legacy", [False, True], ids=["newer", "older"])
def test_cli_proxy_keeps_the_rest_of_the_entry_on_either_release(service, http, legacy):
    fake = FakeCLIProxy(admin_key=ADMIN).start()
    fake.legacy = legacy                   # older releases replace an entry whole with what a PATCH sends
    try:
        fake.entry("openrouter", OR_BASE, ["m-one"], prefix="or")
        rest = lambda: {k: v for k, v in fake.entries[0].items() if k != "models"}
        before = rest()
        assert add_hub(http, fake, "cliproxy")[0] == 201
        item = onboarded(http, "m-two", None)
        assert item["state"] == "done", item["reason"]
        assert len(fake.entries) == 1 and rest() == before
        assert [m["name"] for m in fake.entries[0]["models"]] == ["m-one", "m-two"]
        status, _, d = http("POST", f"/bench/models/{item['model']}/retire", {"reason": "gone", "from_hub": True})
        assert status == 200 and d["hub"]["removed"], d
        assert len(fake.entries) == 1 and rest() == before
        assert [m["name"] for m in fake.entries[0]["models"]] == ["m-one"]
    finally:
        fake.stop()


@pytest.mark.parametrize("legacy", [False, True], ids=["newer", "older"])
def test_retiring_from_open_webui_takes_its_record_and_list_entry_and_a_refusal_retires_nothing(service, http, legacy):
    fake, kind, via = openwebui()
    fake.legacy = legacy                   # older releases delete a record with DELETE ?id=, newer with a POST
    try:
        assert add_hub(http, fake, kind)[0] == 201
        served = "qwen/qwen3-coder:free"
        item = onboarded(http, served, via)
        assert item["state"] == "done", item["reason"]
        record = fake.records[served]
        assert record["access_control"] is None and record["access_grants"] == [
            {"principal_type": "user", "principal_id": "*", "permission": "read"}]     # every user, old or new
        alias = item["model"]
        fake.admin_key = "rotated"
        status, _, d = http("POST", f"/bench/models/{alias}/retire", {"reason": "gone", "from_hub": True})
        assert status >= 400 and "refused the admin key" in d["error"]["message"], d
        assert http("GET", f"/bench/models/{alias}")[2]["model"]["status"] == "active"     # nothing half done
        writes = len(fake.writes)
        assert http("POST", f"/bench/models/{alias}/retire", {"from_hub": True})[0] == 400    # no reason: no call
        assert len(fake.writes) == writes
        fake.admin_key = ADMIN
        status, _, d = http("POST", f"/bench/models/{alias}/retire", {"reason": "gone", "from_hub": True})
        assert status == 200 and d["hub"] == {"endpoint": "myhub", "removed": True}, d
        assert d["model"]["status"] == "retired"
        assert served not in fake.records and served not in fake.configs["0"]["model_ids"]
        assert served not in fake.listed()
    finally:
        fake.stop()


def test_discover_offers_a_route_through_the_hub_and_its_button_adds_and_onboards_it(home, service, http, hub):
    install_samples(home)
    fake, kind, _ = hub
    assert add_hub(http, fake, kind)[0] == 201
    served = "qwen/qwen3-coder:free"
    status, _, d = http("GET", "/bench/discover?find=qwen3-coder")
    assert status == 200 and d["hub_errors"] == []
    coder = next(m for m in d["models"] if m["model"] == served)
    route = next(r for r in coder["routes"] if r["endpoint"] == "myhub")
    assert route["via"] == "openrouter" and "--via openrouter" in route["onboard"]
    s = Session(service.url)
    status, _, page = s.get("/discover?find=qwen3-coder")
    pick = f"myhub|{served}|openrouter"
    assert status == 200 and f'value="{pick}"' in page and "Add to hub and onboard" in page
    status, headers, _ = s.form("/discover/onboard", {"pick": pick, "back": "/discover?find=qwen3-coder"})
    assert status == 303, headers
    item = http("GET", "/bench/onboard")[2]["items"][0]
    assert item["served"] == served and item["endpoint"] == "myhub" and item["via"] == "openrouter"
    done = wait_for(lambda: (lambda i: i if i["state"] in ("done", "failed") else None)(
        http("GET", f"/bench/onboard/{item['id']}")[2]), timeout=60)
    assert done["state"] == "done", (done["reason"], done["log_lines"])
    assert served in fake.listed() and len(fake.writes) >= 1
    status, _, d = http("GET", "/bench/discover?find=qwen3-coder")
    coder = next(m for m in d["models"] if m["model"] == served)
    assert [r["on_bench"] for r in coder["routes"] if r["endpoint"] == "myhub"] == [done["model"]]


def test_discover_names_a_hub_that_does_not_answer_and_asks_it_again(home, service, http):
    install_samples(home)
    fake, kind, _ = litellm()
    try:
        assert add_hub(http, fake, kind)[0] == 201
    finally:
        fake.stop()
    service.bench.registry._sources.clear()            # as after a restart: the hub's sources not read yet
    d = http("GET", "/bench/discover?find=qwen3-coder")[2]
    assert [e["endpoint"] for e in d["hub_errors"]] == ["myhub"] and "did not answer" in d["hub_errors"][0]["error"]
    coder = next(m for m in d["models"] if m["model"] == "qwen/qwen3-coder:free")
    assert [r for r in coder["routes"] if r["endpoint"] == "myhub"] == []
    assert http("GET", "/bench/discover?find=qwen3-coder")[2]["hub_errors"]          # asked again, not cached
    status, _, page = Session(service.url).get("/discover?find=qwen3-coder")
    assert status == 200 and "Hub myhub offers no routes now" in page and "did not answer" in page


def test_the_cli_adds_a_hub_with_both_keys_from_stdin_onboards_via_it_and_retires_from_it(service, isolated,
                                                                                         capsys, monkeypatch):
    from benchwarmers.cli.main import main

    def cli(*argv, stdin=""):
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        code = main(["--url", service.url, *argv])
        out, err = capsys.readouterr()
        return code, out, err

    fake = FakeCLIProxy(admin_key=ADMIN).start()
    try:
        fake.entry("openrouter", OR_BASE, ["m-one"])
        fake.entry("groq", "https://api.groq.com/openai/v1", ["g-one"])      # two sources: --via says which
        code, _, err = cli("endpoint", "add", "plain", "--base", fake.url, "--key-stdin", "--admin-key-stdin",
                           stdin=API_KEY + "\n" + ADMIN + "\n")
        assert code == 2 and "--admin-key-stdin is for a hub" in err
        code, out, err = cli("endpoint", "add", "myhub", "--base", fake.url, "--hub", "cliproxy", "--key-stdin",
                             "--admin-key-stdin", "--json", stdin=API_KEY + "\n" + ADMIN + "\n")
        assert code == 0, err
        assert json.loads(out)["endpoint"]["admin_key_source"] == "keys.json"
        assert keys_json(isolated)["myhub"] == API_KEY and keys_json(isolated)["myhub.admin"] == ADMIN
        code, out, err = cli("onboard", "m-two", "--endpoint", "myhub", "--via", "openrouter", "--ad-hoc", "--wait",
                             "--json")
        assert code == 0, err
        assert "m-two" in [m["name"] for m in fake.entries[0]["models"]]
        alias = next(m["alias"] for m in json.loads(cli("models", "--json")[1])["models"] if m["served"] == "m-two")
        code, out, err = cli("model", "retire", alias, "--reason", "done", "--from-hub", "--yes")
        assert code == 0 and "Removed from the hub of endpoint myhub" in out + err, (out, err)
        assert "m-two" not in [m["name"] for m in fake.entries[0]["models"]]
    finally:
        fake.stop()
