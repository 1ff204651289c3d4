"""The bench CLI against hostile input: files and pipes with no end, bodies past the service's limit, bytes that are
not UTF-8, bad URLs and ports, numbers out of range, empty names, mistyped options, missing verbs, and a delete of a
collection that does not exist. Each is a usage error (exit 2) or the service's own refusal, never a traceback, an
"internal error" or "no service answers" from a service that is up."""
from __future__ import annotations

import io
import os

import pytest

from benchwarmers.cli import attach, serve
from benchwarmers.cli.main import build_parser, main
from benchwarmers.servicelink import CommandError
from tests.helpers.panel import fake, requests_for, setup_bench  # noqa: F401 (fixture)

MB = 1024 * 1024
NOWHERE = "http://127.0.0.1:9"      # nothing listens: a command that got as far as a request would exit 3


@pytest.fixture
def run(capsys, monkeypatch):
    """run(*argv) -> (exit code, stdout, stderr), stdin an empty pipe unless given."""
    def call(*argv, stdin=None):
        monkeypatch.setattr("sys.stdin", stdin if stdin is not None else io.StringIO(""))
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err
    return call


def served(home, fake, make_service, **settings):
    """The standard bench (core = a, b, c) served, with these settings; its URL."""
    setup_bench(home, fake, settings=settings or None)
    return make_service().url


# ---- 1. files and pipes bounded by the service's max_body_mb ------------------------------------------

def test_a_file_past_the_limit_is_refused_unread_naming_the_limit_and_setting(run, home, fake, make_service,
                                                                              tmp_path):
    url = served(home, fake, make_service)
    big = tmp_path / "big.log"
    with open(big, "wb") as f:
        f.truncate(21 * MB)            # sparse: past the default 20 MB without writing it
    code, _, err = run("--url", url, "ask", "core", "q", "-f", str(big))
    assert code == 2, err
    assert "big.log" in err and "20 MB" in err and "max_body_mb" in err and "No Benchwarmers service" not in err
    assert requests_for(fake, "m-a") == []


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_device_is_refused_not_read(run):
    code, _, err = run("--url", NOWHERE, "ask", "core", "hi", "-f", "/dev/zero")
    assert code == 2 and "/dev/zero" in err and "is a device, not a file" in err


class Endless:
    """A stdin that never ends (`yes | bench ask`); reading it whole is refused rather than tried."""

    def isatty(self):
        return False

    @property
    def buffer(self):
        return self

    def read(self, n=-1):
        if n is None or n < 0:
            raise AssertionError("stdin read without a limit")
        return b"y" * n


def test_a_pipe_that_never_ends_is_cut_off_at_the_limit(run, home, fake, make_service):
    url = served(home, fake, make_service)
    code, _, err = run("--url", url, "ask", "core", "q", stdin=Endless())
    assert code == 2 and "piped in" in err and "max_body_mb" in err
    assert requests_for(fake, "m-a") == []


def test_a_body_the_service_refuses_mid_send_is_reported_as_too_large(run, home, fake, make_service, tmp_path):
    """Under the default 20 MB, so the CLI sends it; the service takes 1 MB, answers 413 and closes while the body
    is still coming. The service is up: that is no "no service answers"."""
    url = served(home, fake, make_service, max_body_mb=1)
    path = tmp_path / "notes.txt"
    path.write_bytes(b"a" * (19 * MB))
    code, _, err = run("--url", url, "ask", "core", "q", "-f", str(path))
    assert code == 1, err
    assert "No Benchwarmers service" not in err and "max_body_mb" in err
    assert "too large" in err or "the limit is" in err       # ours after a broken upload, or the 413's own words


def test_the_limit_is_the_services_own_when_it_passes_the_default():
    class Settings:
        def __init__(self, reply):
            self.reply = reply

        def get(self, path, **kw):
            if isinstance(self.reply, Exception):
                raise self.reply
            return self.reply

    raised = attach.BodyLimit(Settings({"settings": [{"name": "max_body_mb", "value": 50.0}]}))
    assert raised.allows(5 * MB) and not raised.asked        # under the default: the service is not asked
    assert raised.allows(30 * MB) and raised.known and not raised.allows(51 * MB)
    closed = attach.BodyLimit(Settings(CommandError("Needs the admin token.")))
    assert not closed.allows(21 * MB) and "the default of its max_body_mb setting" in closed.words()


def test_a_small_file_is_attached_as_before(run, home, fake, make_service, tmp_path):
    url = served(home, fake, make_service)
    path = tmp_path / "cache.py"
    path.write_bytes(b"def refresh():\r\n    return stale\r\n\xff\n")
    code, _, err = run("--url", url, "ask", "core", "Any stale values?", "-f", str(path))
    assert code == 0, err
    sent = requests_for(fake, "m-a")[-1].body["messages"][-1]["content"]
    assert sent == 'Any stale values?\n\n<file name="cache.py">\ndef refresh():\n    return stale\n\ufffd\n</file>'


# ---- 2. arguments that are not UTF-8 --------------------------------------------------------------

def test_an_argument_that_is_not_utf8_is_a_usage_error(run):
    code, _, err = run("--url", NOWHERE, "ask", "core", "\udcff")      # what Python makes of the byte 0xff
    assert code == 2 and "argument 5" in err and "not valid UTF-8" in err and "\\xff" in err


# ---- 3. a --url that is no URL --------------------------------------------------------------------

@pytest.mark.parametrize("url", ["http://[::1", "http://127.0.0.1:99999", "ftp://127.0.0.1:8122"])
def test_a_bad_url_is_a_usage_error_naming_url(run, url):
    code, _, err = run("--url", url, "status")
    assert code == 2 and "--url" in err and "Failed" not in err


def test_a_bad_benchwarmers_url_names_the_variable(run, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_URL", "http://[::1")
    code, _, err = run("status")
    assert code == 2 and "BENCHWARMERS_URL" in err


# ---- 4. ports ------------------------------------------------------------------------------------

@pytest.mark.parametrize("port", ["99999", "-1", "eighty"])
def test_a_port_out_of_range_is_refused_while_parsing(run, port):
    code, _, err = run("serve", "--port", port)
    assert code == 2 and "0 to 65535" in err and "OverflowError" not in err


def test_port_zero_still_picks_a_free_port(monkeypatch):
    assert build_parser().parse_args(["serve", "--port", "0"]).port == 0
    monkeypatch.setenv("BENCHWARMERS_PORT", "70000")
    with pytest.raises(CommandError) as refused:
        serve.env_port(8122)
    assert refused.value.code == 2 and "0 to 65535" in str(refused.value)


# ---- 6. --max-tokens bounded ---------------------------------------------------------------------

@pytest.mark.parametrize("value", ["99999999999999999999999", "10000001", "0", "-5", "1.5", "9" * 5000])
def test_max_tokens_out_of_range_is_a_usage_error(run, value):
    code, _, err = run("--url", NOWHERE, "ask", "core", "hi", "--max-tokens", value)
    assert code == 2 and "--max-tokens" in err and "10,000,000" in err


def test_max_tokens_in_range_is_taken():
    assert build_parser().parse_args(["ask", "core", "hi", "--max-tokens", "10000000"]).max_tokens == 10 ** 7


# ---- 7. --with names -----------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["", "a,,b", " , "])
def test_an_empty_with_name_is_a_usage_error(run, value):
    code, _, err = run("--url", NOWHERE, "ask", "core", "hi", "--with", value)
    assert code == 2 and "--with" in err


def test_with_names_are_sent(run, home, fake, make_service):
    url = served(home, fake, make_service)
    code, _, err = run("--url", url, "--json", "ask", "core", "hi", "--with", "x, y", "--with", "z")
    assert code == 0, err
    assert requests_for(fake, "m-x") and requests_for(fake, "m-y") and requests_for(fake, "m-z")


# ---- 8. a mistyped option of a sub-command -------------------------------------------------------

def test_an_unknown_option_is_named_by_its_sub_command_with_the_close_one(run):
    code, _, err = run("--url", NOWHERE, "model", "set", "m1", "--context-window", "-1")
    assert code == 2
    assert err.startswith("bench model set: error: unrecognized arguments: --context-window -1")
    assert "did you mean --context?" in err and "bench model set --help" in err


def test_an_unknown_option_before_the_command_is_the_top_levels(run):
    code, _, err = run("--bogus", "status")
    assert code == 2 and err.startswith("bench: error: unrecognized arguments: --bogus")


# ---- 9. short usage errors; a missing verb in one line -------------------------------------------

@pytest.mark.parametrize("command, verb", [("model", "retire"), ("suite", "run"), ("endpoint", "add"),
                                           ("collection", "delete"), ("key", "revoke"), ("verdicts", "pending")])
def test_a_missing_verb_names_the_verbs_in_one_line(run, command, verb):
    code, out, err = run("--url", NOWHERE, command)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"bench {command}: say what to do:") and verb in err and f"bench {command} --help" in err


def test_a_usage_error_is_its_message_and_a_pointer_not_the_usage_block(run):
    code, _, err = run("ask")
    assert code == 2 and "usage:" not in err
    assert err.splitlines() == ["bench ask: error: the following arguments are required: collection",
                                "Try 'bench ask --help' for examples."]


# ---- 10. deleting a collection that does not exist -----------------------------------------------

def test_deleting_an_unknown_collection_says_so_before_asking(run, home, fake, make_service):
    url = served(home, fake, make_service)
    code, _, err = run("--url", url, "collection", "delete", "nope")
    assert code == 1 and "No collection named 'nope'" in err and "Delete the collection" not in err
    code, _, err = run("--url", url, "collection", "delete", "core")          # a known one is still asked about
    assert code == 1 and "Delete the collection 'core'?" in err
    code, out, err = run("--url", url, "collection", "delete", "core", "--yes")
    assert code == 0 and "Deleted core." in out, err
