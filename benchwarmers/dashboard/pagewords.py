"""The API's advice said for a page: where it names a command-line flag, the form field or button that does it."""
from __future__ import annotations

import re

NO_KEY = "tick 'No key: a local server'"
# (the API's words, as a pattern; what a page says instead). The API's own words stay as they are for the CLI.
PAGE_WORDS = [
    (re.compile(r"Local servers take --no-key; others a key\."),
     f"For a local server, {NO_KEY} and leave the key empty; any other needs a key."),
    (re.compile(r"`bench endpoint add \S+ --base URL` prompts for one \(or --key-stdin\); set (\S+); or pass "
                r"--no-key for a local server\."),
     rf"Paste it in the Key field (or set \1 where the service starts), or {NO_KEY} for a local server."),
    (re.compile(r"Give the key again \(`bench endpoint add [^`]+` prompts for it\), or confirm that this URL may "
                r"have it with keep_key: true \(--keep-key\)\."),
     "Paste the key again in the Key field to send it to the new URL."),
    (re.compile(r"Add --replace to change its URL, protocol or key, or pick another name\."),
     "Pick another name, or change that endpoint from its row on the Endpoints page."),
    (re.compile(r"Pick another with --alias\."), "Type another in the Alias field."),
    (re.compile(r"Say which with --endpoint NAME\."), "Choose its endpoint in the list."),
    (re.compile(r"To add it from another endpoint too, say which with --endpoint NAME\."),
     "To add it from another endpoint too, choose that endpoint in the list."),
    (re.compile(r"Add one first: bench endpoint add NAME --base URL\."), "Add one first on the Endpoints page."),
]


def for_page(text: str) -> str:
    """`text` with the advice a page can act on; unchanged when nothing in it names a flag we know."""
    if "--" not in text:
        return text
    for pattern, said in PAGE_WORDS:
        text = pattern.sub(said, text)
    return text
