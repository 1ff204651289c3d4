"""Catalog-sourced commands: what a catalog says becomes a base URL offered on the Endpoints form and commands
printed for a shell. A catalog is not trusted to say where a key goes (only built-in providers' base URLs, or a
catalog's https URL at a public host name that passes the endpoint checks, are offered), every command is quoted
for the shell it is pasted into, and a provider id that breaks the name rule is left out."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from benchwarmers.catalog import parse, store
from benchwarmers.cli.output import shell_line
from tests.fakes import FakeOpenAI
from tests.helpers.catalog import SAMPLE_DATE, map_endpoints, sample
from tests.helpers.dashboard import Session
from tests.helpers.data import configure
from tests.helpers.http import Http
from tests.security.attack import cli

HOSTILE_ID = "x/$(touch PWNED)';touch PWNED2 #"
BAD_URL = "https://api.shelly.example/v1$(touch${IFS}PWNED3)"


def free_model(mid: str) -> dict:
    return {"id": mid, "name": mid, "tool_call": True, "release_date": "2026-10-01",
            "modalities": {"input": ["text"], "output": ["text"]}, "cost": {"input": 0, "output": 0},
            "limit": {"context": 131072, "output": 8192}}


def hostile_catalog(home: Path) -> None:
    """The recorded models.dev sample, plus providers whose catalog entries are hostile."""
    raw = sample("models.dev-api.json")
    raw["metal"] = {"id": "metal", "name": "Metal", "api": "http://169.254.169.254/latest/meta-data/",
                    "models": {"metal-free": free_model("metal-free")}}
    raw["lanbox"] = {"id": "lanbox", "name": "LAN box", "api": "https://10.0.0.7/v1",
                     "models": {"lan-free": free_model("lan-free")}}
    raw["shelly"] = {"id": "shelly", "name": "Shelly", "api": BAD_URL,
                     "models": {"shelly-free": free_model("shelly-free")}}
    raw["bad;touch PWNED4"] = {"id": "x", "name": "Bad id", "api": "https://bad.example/v1",
                              "models": {"bad-free": free_model("bad-free")}}
    raw["openrouter"]["models"][HOSTILE_ID] = free_model(HOSTILE_ID)
    path = store.copy_path(home, "models.dev")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"source": "models.dev", "url": "recorded sample", "fetched": SAMPLE_DATE,
                                "data": parse.trim(raw, parse.KEEP["models.dev"])}), encoding="utf-8")


@pytest.fixture
def discover(home, make_service):
    with FakeOpenAI() as hub:
        hub.set_models([HOSTILE_ID])
        configure(home, {"or": (hub, "openai")}, {})
        map_endpoints(home, {"or": "openrouter"})
        hostile_catalog(home)
        svc = make_service()
        status, _, d = Http(svc.url)("GET", "/bench/discover?limit=1000")
        assert status == 200, d
        yield svc, {(m["provider"], m["model"]): m for m in d["models"]}


def words_in_sh(line: str, cwd: Path) -> list[str]:
    """The words a POSIX shell makes of a pasted line, run for real (the command itself replaced by printf)."""
    done = subprocess.run(["/bin/sh", "-c", 'set -- ' + line + '; printf "%s\\0" "$@"'], cwd=str(cwd),
                          capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().split("\0")[:-1]


def test_a_catalog_base_url_is_offered_only_when_it_is_https_at_a_public_name(discover):
    """Discover pre-filled the endpoint form with the catalog's `api`: http://169.254.169.254/... was offered."""
    svc, found = discover
    metal, lan = found[("metal", "metal-free")]["no_route"], found[("lanbox", "lan-free")]["no_route"]
    assert metal["base_url"] is None and "command" not in metal and "argv" not in metal
    assert lan["base_url"] is None and "command" not in lan
    page = Session(svc.url).get("/discover?find=free")[2]
    assert "169.254" not in page and "10.0.0.7" not in page
    assert found[("groq", "openai/gpt-oss-120b")]["no_route"]["base_url"] == "https://api.groq.com/openai/v1"


def test_a_provider_id_that_breaks_the_name_rule_is_left_out(discover):
    _, found = discover
    assert not [key for key in found if "touch" in key[0] or key[1] == "bad-free"]


@pytest.mark.skipif(not os.path.exists("/bin/sh"), reason="needs a POSIX shell")
def test_every_printed_command_reads_back_as_its_words_in_a_shell(discover, tmp_path):
    """`bench discover` printed `...;touch /tmp/x #` unquoted: pasted, it ran. Each command, pasted into sh, must
    give back exactly its words, and run nothing."""
    svc, found = discover
    here = tmp_path / "shell"
    here.mkdir()
    shelly = found[("shelly", "shelly-free")]["no_route"]
    route = found[("openrouter", HOSTILE_ID)]["routes"][0]
    for argv, line in ((shelly["argv"], shelly["command"]), (route["onboard_argv"], route["onboard"])):
        assert words_in_sh(line, here) == argv
    assert shelly["argv"][5] == BAD_URL and route["onboard_argv"][2] == HOSTILE_ID
    done = cli(svc.url, "discover", "--find", "x/$(touch", "--limit", "5")
    assert done.returncode == 0, done.stderr
    printed = [ln.split(": ", 1)[1].split("  (")[0] for ln in done.stderr.decode().splitlines()
               if ln.startswith("To queue one for onboarding: ")]
    assert printed and words_in_sh(printed[0], here) == route["onboard_argv"]
    assert not list(here.iterdir())                                # nothing ran: no PWNED file
    assert not list(Path.cwd().glob("PWNED*"))


def test_the_windows_form_quotes_for_cmd_and_powershell_or_gives_no_line():
    assert shell_line(["bench", "onboard", "qwen/qwen3:free", "--endpoint", "or"], windows=True) == \
        "bench onboard qwen/qwen3:free --endpoint or"
    assert shell_line(["bench", "onboard", "a&calc|x;y", "--endpoint", "or"], windows=True) == \
        'bench onboard "a&calc|x;y" --endpoint or'
    assert shell_line(["bench", "onboard", "@cf/meta/llama"], windows=True) == 'bench onboard "@cf/meta/llama"'
    for word in ('a"&calc', "%COMSPEC%", "$(calc)", "`calc`", "a!b!", "x\ny"):
        assert shell_line(["bench", "onboard", word], windows=True) is None, word
    assert shell_line(["bench", "onboard", "a b'c"], windows=False) == "bench onboard 'a b'\"'\"'c'"
