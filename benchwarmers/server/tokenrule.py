"""What an admin token must be to guard the service: long, without spaces, and hard to guess. A token made of a
common word and a run of digits (`password12345678`) passed the length and variety rules; here what a guesser
tries first (the words below, runs like 1234, abcd or qwer, repeats) is taken out, and enough must be left."""
from __future__ import annotations

MIN_TOKEN = 16         # characters
MIN_DISTINCT = 8       # different characters
MIN_LEFT = 10          # characters left once the words, runs and repeats a guesser tries first are taken out
MAKE_ONE = 'python -c "import secrets; print(secrets.token_urlsafe(24))"'
# Passwords and words a guesser tries first (lower case, read through LEET), this project's own names among them.
WORDS = frozenset("""
password passwd pass word admin administrator root toor superuser letmein welcome secret secrets token
changeme change default login logon master monkey dragon sunshine princess football baseball soccer hockey
iloveyou love trustno trust shadow superman batman spiderman hello freedom whatever starwars computer internet
server service access guest user username test testing tester example sample demo temp temporary private
mypass mypassword passpass qazwsx wsxedc god money
killer ninja mustang michael charlie jordan jennifer hunter ranger buster thomas tigger summer winter spring
autumn flower cookie cheese pepper ginger matrix hacker hack bench benchwarmers warmer warmers gateway panel
openai anthropic claude gemini ollama chatgpt llm api apikey key keys bearer auth oauth open sesame
opensesame please enter local localhost docker fly render compose secure unlock unlocked letmeinplease
""".split())
LEET = str.maketrans("013457@$!", "oieastasi")
# Rows a run is read along, either way: the alphabet, the digits and the keyboard's rows (shifted digits too).
ROWS = ("abcdefghijklmnopqrstuvwxyz", "01234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm", "qwertzuiop", "yxcvbnm",
        "azertyuiop", "qsdfghjklm", "wxcvbn", "!@#$%^&*()")
LONGEST = max(map(len, WORDS))


def _steps() -> dict:
    """(a, b) -> the (row, direction) pairs along which b comes one step after a."""
    steps: dict = {}
    for n, row in enumerate(ROWS):
        for a, b in zip(row, row[1:]):
            steps[a, b] = steps.get((a, b), frozenset()) | {(n, 1)}
            steps[b, a] = steps.get((b, a), frozenset()) | {(n, -1)}
    return steps


STEPS = _steps()
RUN = 3                # runs along a row, or repeats, this long or longer are taken out
SAME = frozenset({"same"})


def token_problem(token: str | None) -> str | None:
    """Why an admin token cannot guard the service, or None: it must be long, without spaces or control characters,
    varied, and more than a word with digits."""
    if not token:
        return "BENCHWARMERS_ADMIN_TOKEN is not set"
    if len(token) < MIN_TOKEN:
        return f"the admin token is shorter than {MIN_TOKEN} characters"
    if any(c.isspace() or not c.isprintable() for c in token):
        return "the admin token holds spaces or control characters"
    if len(set(token)) < MIN_DISTINCT:
        return f"the admin token has fewer than {MIN_DISTINCT} different characters"
    left = guessable_out(token)
    if len(left) < MIN_LEFT:
        return (f"the admin token is easy to guess: once its common words, runs like 1234 or qwer and repeats are "
                f"taken out, {len(left)} characters are left, fewer than {MIN_LEFT}")
    return None


def guessable_out(token: str) -> str:
    """The token without what a guesser tries first: its period when it repeats a shorter part, then every word of
    WORDS (as written, or in leetspeak), every run of RUN or more neighbours (abc, 4321, qwer) and every character
    repeated RUN or more times."""
    text = token[:period(token)].lower()
    plain = text.translate(LEET)
    cut = [False] * len(text)
    for length in range(min(len(text), LONGEST), RUN - 1, -1):
        for start in range(len(text) - length + 1):
            if plain[start:start + length] in WORDS or text[start:start + length] in WORDS:
                cut[start:start + length] = [True] * length
    for start, end in runs(text):
        cut[start:end] = [True] * (end - start)
    return "".join(c for c, gone in zip(text, cut) if not gone)


def runs(text: str):
    """(start, end) of each run of RUN or more characters that goes along a row of ROWS one step at a time, the
    same way throughout (abcd, 4321, qwer), or repeats one character (aaa)."""
    start, ways = 0, None     # the run under way: where it starts, the ways it still goes (None: one character)
    for i in range(1, len(text) + 1):
        way = (SAME if text[i - 1] == text[i] else STEPS.get((text[i - 1], text[i]))) if i < len(text) else None
        if way and (ways is None or way & ways):
            ways = way if ways is None else way & ways
            continue
        if i - start >= RUN:
            yield start, i
        start, ways = (i - 1, way) if way else (i, None)


def period(text: str) -> int:
    """The length of the shortest part the text repeats at least twice over (abcabcab: 3), else its length."""
    for length in range(1, len(text) // 2 + 1):
        if text[length:] == text[:-length]:
            return length
    return len(text)
