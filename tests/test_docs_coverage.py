"""The documents against the code: every command, environment variable, setting and dashboard page is in the
docs, and every link and file path the docs name exists. Each failure says what is missing and where to add it."""
from __future__ import annotations

import re

from benchwarmers.cli.main import build_parser
from benchwarmers.dashboard.routes import PAGES
from benchwarmers.settings import SETTINGS
from tests.helpers import docscan
from tests.helpers.docscan import ROOT

# The documents the product promises (README's map of them, and the list).
PROMISED = ("README.md", "USAGE.md", "GATEWAY.md", "HOSTING.md", "AGENTS.md", "CLIENTS.md", "PRIVACY.md",
            "SECURITY.md", "TERMS.md", "BENCHMARKS.md", "CONTRIBUTING.md", "CHANGELOG.md", "RELEASING.md",
            "LICENSE", "NOTICE")

# Environment variables the program reads that are no user's business, each with why.
INTERNAL = {
    "BENCHWARMERS_CHECK_IN_VENV": "scripts/check.py sets it on the copy of itself it re-runs inside .venv, so that "
                                  "copy does not make the venv again; nobody sets it by hand",
    "PYTHONPATH": "suite seeding passes the user's own on to the repo's tests it runs, after the copy's folders; "
                  "Benchwarmers does not read it",
}


def all_docs_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in docscan.documents())


def test_the_promised_documents_exist():
    missing = [name for name in PROMISED if not (ROOT / name).is_file()]
    assert not missing, f"missing documents at the checkout's root: {', '.join(missing)}"


def test_readme_opens_with_the_two_commands():
    """Run it and test it come first: the first code block of README.md holds both."""
    text = docscan.text("README.md")
    block = re.search(r"```[^\n]*\n(.*?)```", text, re.S)
    assert block, "README.md has no code block: its first one should run the service and the tests"
    for command in ("python serve.py", "python scripts/check.py"):
        assert command in block.group(1), f"README.md's first code block lacks `{command}`: put it there"


# ---- the command line ----------------------------------------------------------------------------------

def test_the_scan_finds_the_commands():
    found = {" ".join(words) for words, _ in docscan.commands(build_parser())}
    assert {"ask", "model retire", "suite run", "endpoint add", "mcp"} <= found


def test_every_command_is_in_readme_or_usage():
    text = docscan.text("README.md") + "\n" + docscan.text("USAGE.md")
    missing = []
    for words, help_text in docscan.commands(build_parser()):
        said = r"\s+".join(re.escape(w) for w in words)
        if not re.search(rf"\b(?:bench|benchwarmers|bench\.py)\s+{said}(?![\w-])", text):
            missing.append(f"  bench {' '.join(words)}  ({help_text})")
    assert not missing, ("commands in neither README.md nor USAGE.md; add each to USAGE.md's command reference "
                         "(\"## The command line\"), as `bench WORDS`:\n" + "\n".join(missing))


# ---- the environment -----------------------------------------------------------------------------------

def test_the_scan_finds_the_environment_reads():
    found = docscan.environment_reads()
    for name in ("BENCHWARMERS_URL", "BENCHWARMERS_HOME", "BENCH_CLIENT", "BENCHWARMERS_PYTHON", "HTTPS_PROXY",
                 "BENCHWARMERS_KEY_"):
        assert name in found, name


def test_every_environment_variable_is_documented():
    text = all_docs_text()
    missing = []
    for name, where in sorted(docscan.environment_reads().items()):
        if name in INTERNAL:
            continue
        shown = f"{name}<NAME>" if name.endswith("_") else name    # a prefix: BENCHWARMERS_KEY_<NAME>
        if not re.search(rf"(?<![\w]){re.escape(name)}" + ("" if name.endswith("_") else r"(?![\w])"), text):
            missing.append(f"  {shown} (read at {where})")
    assert not missing, ("environment variables the code reads that no document names; add a row for each to "
                         "the table in USAGE.md's \"## Environment variables\" (or, if no user should ever set it, "
                         "to INTERNAL in tests/test_docs_coverage.py with the reason):\n" + "\n".join(missing))


def test_internal_variables_are_still_read():
    stale = sorted(set(INTERNAL) - set(docscan.environment_reads()))
    assert not stale, f"INTERNAL lists variables the code no longer reads: {stale}; remove them"


# ---- settings and pages --------------------------------------------------------------------------------

def test_every_setting_is_in_gateway_md_and_usage_md():
    gateway, usage = docscan.text("GATEWAY.md"), docscan.text("USAGE.md")
    rows = {line.split("|")[1].strip(" `"): line for line in gateway.splitlines() if line.startswith("| `")}
    missing = [f"  {n}: add a row `| `{n}` | default | what it does |` to GATEWAY.md's \"## Settings\" table"
               for n in SETTINGS if n not in rows]
    missing += [f"  {n}: name it (as `{n}`) where USAGE.md's Settings page section says what it is for"
                for n in SETTINGS if f"`{n}`" not in usage]
    assert not missing, "settings missing from the docs:\n" + "\n".join(missing)
    for name, setting in SETTINGS.items():   # the table says which need a restart, and only those
        assert ("restart" in rows[name]) == setting.restart, \
            f"GATEWAY.md's row for {name} should {'' if setting.restart else 'not '}say it needs a restart"
        if setting.most is not None:         # and each bound, as the error names it
            assert f"| {setting.most:,} |" in rows[name], f"GATEWAY.md's row for {name} should give {setting.most:,}"


def test_every_dashboard_page_is_in_usage_md():
    usage = docscan.text("USAGE.md")
    headings = {h.strip().lower() for h in re.findall(r"^#{2,4} (.+)$", usage, re.M)}
    missing = [f"  {p.nav}: a heading \"### {p.nav}\" in USAGE.md's \"## The dashboard\""
               for p in PAGES if p.nav and not any(h.startswith(p.nav.lower()) for h in headings)]
    missing += [f"  {p.path}: name it (as `{p.path}`) under its section's heading in USAGE.md"
                for p in PAGES if not p.nav and f"`{p.path}`" not in usage]
    if not any(h.startswith("login") for h in headings):
        missing.append("  Login: a heading \"### Login\" in USAGE.md's \"## The dashboard\"")
    assert not missing, "dashboard pages USAGE.md does not describe:\n" + "\n".join(missing)


# ---- links and files -----------------------------------------------------------------------------------

def test_every_relative_link_resolves():
    broken = []
    for doc in docscan.documents():
        for m in docscan.mentions(doc):
            target = docscan.link_target(m) if m.kind == "link" else None
            if target is not None and not target.exists():
                broken.append(f"  {m.where()}: ({m.text}) points to nothing")
    assert not broken, "links to files that do not exist; fix the target or drop the link:\n" + "\n".join(broken)


def test_every_file_the_docs_name_exists():
    tops, wrong = docscan.top_level(), []
    for doc in docscan.documents():
        for m in docscan.mentions(doc):
            patterns = docscan.path_patterns(m, tops) if m.kind != "link" else None
            if patterns and not docscan.exists(patterns):
                wrong.append(f"  {m.where()}: `{m.text}`")
    assert not wrong, ("paths the docs name that are not in the checkout; correct each path, or say it in words if "
                       "it is made later (a build output, a data-folder file):\n" + "\n".join(wrong))


def test_the_path_check_can_fail():
    tops = docscan.top_level()
    made_up = docscan.Mention("README.md", 1, "deploy/fly.toml", "path")
    assert docscan.path_patterns(made_up, tops) == ["deploy/fly.toml"]
    assert not docscan.exists(["deploy/fly.toml"])
    assert docscan.exists(["deploy/fly/fly.toml"]) and docscan.exists(["benchwarmers/formats/*.py"])
    assert docscan.path_patterns(docscan.Mention("GATEWAY.md", 1, "config/repos.json", "path"), tops) is None


def test_notice_names_every_shipped_catalog_copy():
    notice = docscan.text("NOTICE")
    unnamed = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "benchwarmers/catalog/data").glob("*.json"))
               if p.relative_to(ROOT).as_posix() not in notice]
    assert not unnamed, (f"NOTICE does not name the shipped catalog copies {unnamed}: say where each comes from and "
                         "under which licence")
