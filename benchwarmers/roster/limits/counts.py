"""The counts the user's rate limits are checked against (quota.py): a connection's or a model's requests and tokens,
the last minute's in a flat window, today's and this month's as totals."""
from __future__ import annotations

from array import array

from ...store.ledger import month_end, month_of

MINUTE, DAY = 60.0, 86400.0
INF = float("inf")
MERGE = 0.005   # seconds: what happens this close to the window's newest entry joins it


class MinuteWindow:
    """What happened in the last minute, oldest first: when, and how much, in flat arrays with a running total.
    What happens within MERGE of the start of the newest entry joins it, and an entry leaves the minute with its
    newest part (so a limit frees up at most MERGE late, never early): at a thousand calls a second a minute holds
    twelve thousand entries, not sixty thousand, and no more however fast the calls come."""
    __slots__ = ("when", "amount", "start", "total", "opened", "first")

    def __init__(self) -> None:
        self.when = array("d")
        self.amount = array("q")
        self.start, self.total = 0, 0            # entries before `start` are gone; total: of the amounts
        self.opened = float("-inf")              # when the newest entry's first part happened
        self.first = INF                # INF: empty; else no later than the oldest entry (what roll() looks at)

    def __len__(self) -> int:
        """Entries (not calls: see total)."""
        return len(self.when) - self.start

    def append(self, when: float, amount: int = 1) -> None:
        if self.first < INF and 0 <= when - self.opened < MERGE and when >= self.when[-1]:
            self.when[-1] = when
            self.amount[-1] += amount
        else:
            self.when.append(when)
            self.amount.append(amount)
            self.opened = when
            if when < self.first:
                self.first = when
        self.total += amount

    def drop_until(self, cut: float) -> None:
        """Forget what happened at or before `cut`."""
        when, i = self.when, self.start
        while i < len(when) and when[i] <= cut:
            self.total -= self.amount[i]
            i += 1
        self.start = i
        self.first = when[i] if i < len(when) else INF
        if i > 1024 and 8 * i > len(when):       # the forgotten head is an eighth of it: let it go
            del self.when[:i]
            del self.amount[:i]
            self.start = 0

    def time(self, index: int) -> float:
        """When the entry `index` (from the oldest; negative: from the newest) happened."""
        return self.when[self.start + index if index >= 0 else index]

    def pairs(self):
        return zip(self.when[self.start:], self.amount[self.start:])

    def frees(self, limit: int, more: int) -> float:
        """When enough of the window has left it for `more` to fit under `limit` (or for anything, once empty)."""
        left = self.total
        for when, n in self.pairs():
            left -= n
            if left <= 0 or left + more <= limit:
                return when + MINUTE
        return self.time(-1) + MINUTE


class Counts:
    """One connection's (or model's) requests and tokens: the last minute's one by one, today's and this month's
    as totals (UTC calendar)."""

    def __init__(self) -> None:
        self.times = MinuteWindow()                   # the requests of the last minute (total: how many)
        self.tokens = MinuteWindow()                  # the tokens of the last minute
        self.day, self.day_requests, self.day_tokens = 0, 0, 0
        self.month, self.month_requests = "", 0

    def roll(self, now: float) -> None:
        """Forget what left the minute, and start a new day's (and month's) totals; nothing when neither is due."""
        cut = now - MINUTE
        if self.times.first <= cut:
            self.times.drop_until(cut)
        if self.tokens.first <= cut:
            self.tokens.drop_until(cut)
        day = int(now // DAY)
        if day != self.day or not self.month:    # the UTC month turns only with the UTC day (month: once set)
            self.day, self.day_requests, self.day_tokens = day, 0, 0
            if month_of(now) != self.month:
                self.month, self.month_requests = month_of(now), 0

    def count(self, now: float, tokens: int) -> None:
        self.times.append(now)
        self.day_requests += 1
        self.month_requests += 1
        if tokens:      # add()'s, inline: every counted call comes here
            self.tokens.append(now, tokens)
            day_tokens = self.day_tokens + tokens
            self.day_tokens = day_tokens if day_tokens > 0 else 0

    def add(self, now: float, tokens: int) -> None:
        if tokens:
            self.tokens.append(now, tokens)
            day_tokens = self.day_tokens + tokens
            self.day_tokens = day_tokens if day_tokens > 0 else 0

    def minute_tokens(self) -> int:
        return max(0, self.tokens.total)

    def used(self) -> dict:
        return {"rpm": self.times.total, "rpd": self.day_requests, "rpmonth": self.month_requests,
                "tpm": self.minute_tokens(), "tpd": self.day_tokens}

    def resets(self, now: float) -> dict:
        """When each window next lets more through: the minute's when its oldest call leaves it."""
        day_end = (self.day + 1) * DAY
        return {"rpm": self.times.time(0) + MINUTE if self.times else None, "rpd": day_end, "rpmonth": month_end(now),
                "tpm": self.tokens.time(0) + MINUTE if self.tokens else None, "tpd": day_end}

    def blocked_until(self, limits: dict, now: float, tokens: int) -> list[tuple[float, str]]:
        """(when it frees, limit) for each of `limits` that one more call of `tokens` would break."""
        out = []
        rpm = limits.get("rpm")
        if rpm and self.times.total >= rpm:
            out.append((self.times.frees(rpm, 1), "rpm"))
        tpm, used = limits.get("tpm"), self.minute_tokens()
        if tpm and used and used + tokens > tpm:
            out.append((self.tokens.frees(tpm, tokens), "tpm"))
        day_end = (self.day + 1) * DAY
        if limits.get("rpd") and self.day_requests >= limits["rpd"]:
            out.append((day_end, "rpd"))
        if limits.get("tpd") and self.day_tokens and self.day_tokens + tokens > limits["tpd"]:
            out.append((day_end, "tpd"))
        if limits.get("rpmonth") and self.month_requests >= limits["rpmonth"]:
            out.append((month_end(now), "rpmonth"))
        return out


def count_on(pair: tuple, now: float, tokens: int, requests: int) -> None:
    """Each of `pair` (a call's connection's and model's Counts) rolled, then counted on: Counts.count() when
    `requests` is 1, Counts.add() when 0. Quota.take() and Quota.spent() come here at every call, with or without a
    limit set."""
    for counts in pair:
        counts.roll(now)
        if requests:
            counts.count(now, tokens)
        else:
            counts.add(now, tokens)
