"""The dashboard in a real browser: headless Chromium renders the home page and the login page."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.helpers.data import configure

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not CHROMIUM, reason="no Chromium on this machine")]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def render(url: str, tmp_path, *extra: str) -> str:
    """The DOM after Chromium loaded the page (following redirects), as Chromium's own serialisation."""
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *extra, "--dump-dom", url],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_home_page_renders_status_and_empty_lists(service, tmp_path):
    dom = render(service.url + "/", tmp_path)
    assert "<h1>Status</h1>" in dom
    assert str(service.bench.home) in dom
    assert "No endpoints yet" in dom and "bench endpoint add" in dom
    assert "No collections yet" in dom
    assert 'href="/static/style.css"' in dom


def test_every_link_on_the_home_page_answers(service):
    import re
    import urllib.request
    html = urllib.request.urlopen(service.url + "/", timeout=10).read().decode()
    for href in set(re.findall(r'href="(/[^"]*)"', html)):
        with urllib.request.urlopen(service.url + href, timeout=10) as resp:
            assert resp.status == 200, href


def test_home_page_lists_what_is_configured(service, home, tmp_path):
    class Fake:
        url = "http://127.0.0.1:9/v1"
    configure(home, {"local": (Fake, "openai")}, {"alpha": ("local", "alpha-1")},
              {"core": {"members": ["alpha"], "description": "code <review>", "explore": 1}})
    dom = render(service.url + "/", tmp_path)
    assert "alpha-1" in dom and "bench/core" in dom
    assert "code &lt;review&gt;" in dom          # escaped, never markup


def test_with_a_token_the_browser_lands_on_the_login_page(make_service, tmp_path):
    svc = make_service(admin_token="t" * 20)
    dom = render(svc.url + "/", tmp_path)
    assert "<h1>Log in</h1>" in dom and 'type="password"' in dom
    assert "t" * 20 not in dom


def test_screenshot_of_the_home_page(service, tmp_path):
    shot = tmp_path / "home.png"
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,900",
                           f"--screenshot={shot}", service.url + "/"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and shot.stat().st_size > 5000
