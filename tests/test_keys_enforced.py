"""When gateway keys are enforced, and saying so: the require_keys setting, status and key create naming the rule,
keys refused for collections that do not exist, and a direct ask outside a key's reach answered 403."""
from __future__ import annotations

from tests.helpers.data import write
from tests.helpers.panel import MEMBERS, body, fake, setup_bench  # noqa: F401
from tests.test_cli_ask import bench_cli, err

TOKEN = "x" * 20


def test_without_a_token_keys_are_not_enforced_and_key_create_says_so(home, fake, make_app):
    setup_bench(home, fake)
    app = make_app()
    status, _, made = app("POST", "/bench/keys", {"name": "app", "collections": ["core"]})
    assert status == 201 and made["enforced"] is False
    assert "BENCHWARMERS_ADMIN_TOKEN" in made["enforcement"] and "require_keys" in made["enforcement"]
    keys = app("GET", "/bench/status")[2]["gateway_keys"]
    assert keys["enforced"] is False and "require_keys" in keys["note"]
    assert app("POST", "/v1/chat/completions", body())[0] == 200        # no key: still answered


def test_require_keys_enforces_keys_on_loopback_without_a_token(home, fake, make_app):
    setup_bench(home, fake, settings={"require_keys": True})
    app = make_app()
    status, _, made = app("POST", "/bench/keys", {"name": "app", "collections": ["core"]})
    assert status == 201 and made["enforced"] is True                  # admin routes stay open on loopback
    assert app("GET", "/bench/status")[2]["gateway_keys"]["enforced"] is True
    status, _, data = app("POST", "/v1/chat/completions", body())
    assert status == 401 and "gateway key" in data["error"]["message"]
    auth = {"Authorization": f"Bearer {made['key']}"}
    assert app("POST", "/v1/chat/completions", body(), headers=auth)[0] == 200
    assert app("POST", "/v1/chat/completions", body("a"), headers=auth)[0] == 403   # no direct asks for it
    app("DELETE", "/bench/keys/app")
    assert app("POST", "/v1/chat/completions", body(), headers=auth)[0] == 401      # revoked means revoked


def test_a_token_enforces_keys_and_status_says_so(home, fake, make_app):
    setup_bench(home, fake)
    keys = make_app(admin_token=TOKEN)("GET", "/bench/status", headers={"Authorization": f"Bearer {TOKEN}"})[2]
    assert keys["gateway_keys"]["enforced"] is True


def test_a_key_for_a_collection_that_does_not_exist_is_refused_with_close_names(home, fake, make_app):
    setup_bench(home, fake)
    app = make_app()
    status, _, data = app("POST", "/bench/keys", {"name": "app", "collections": ["core", "cor3"]})
    assert status == 400 and "'cor3'" in data["error"]["message"] and "Did you mean 'core'" in data["error"]["message"]
    assert app("GET", "/bench/keys")[2]["keys"] == []
    assert app("POST", "/bench/keys", {"name": "any", "collections": ["*"]})[0] == 201


def test_the_cli_warns_when_keys_are_not_enforced(home, fake, make_service):
    setup_bench(home, fake)
    url = make_service().url
    proc = bench_cli(url, "key", "create", "app", "--collections", "core")
    assert proc.returncode == 0 and "Warning: Gateway keys are not enforced" in err(proc)
    proc = bench_cli(url, "status")
    assert "Gateway keys: not enforced" in proc.stdout.decode() and "require_keys" in proc.stdout.decode()
    write(home, "settings.json", {"require_keys": True})
    proc = bench_cli(url, "key", "create", "app2", "--collections", "core")
    assert proc.returncode == 0 and "Warning" not in err(proc)
    assert "Gateway keys: enforced" in bench_cli(url, "status").stdout.decode()
