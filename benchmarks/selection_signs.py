"""Route choice with no user verdict at all (`python benchmarks/selection.py --no-verdicts`): what agent turns show
(tool calls checked) and a judge of given accuracy on the served and one shadow answer, against Thompson sampling that
gets every verdict; and how many turns a member keeps once its tool calls start to fail.

Each member of selection.py's scenarios has a hidden accuracy p. Here a share of its bad answers are bad tool calls
the service sees on every turn (TOOL_SHARE of 1 - p: a tool not offered, arguments not JSON or not fitting); the rest
are wrong in ways only a reader sees. The router's record holds nothing a user said: each turn adds the served
member's checked tool calls, and one shadow seat's (the next member in the record's order); the judge (when there is
one) says of both answers whether they are useful, right with its accuracy, and its verdicts count at
evidence.JUDGE_WEIGHT as they do once its agreement with the user holds (the simulation takes it as measured). The pick
is core.choose.rank's first, the service's own code. Thompson (Beta(1 + useful, 1 + not useful) over the true outcome
of every answer it got, 10% uniform) sees every verdict. Same draws for every policy, seeded."""
from __future__ import annotations

import random
import statistics
from dataclasses import dataclass

from benchwarmers.core.agentsigns import STRIKES
from benchwarmers.core.choose import rank
from benchwarmers.core.rankings import Standing

TOOL_SHARE = 0.5      # of a member's bad answers, those that are bad tool calls (the service sees them)
JUDGES = (None, 0.9, 0.75)   # no judge; a judge right 90% of the time; 75%


@dataclass
class Turn:
    useful: bool
    tool_failed: bool


def outcome(world: random.Random, p: float) -> Turn:
    """An answer: useful with chance p; a bad one is a bad tool call with chance TOOL_SHARE."""
    useful = world.random() < p
    return Turn(useful, not useful and world.random() < TOOL_SHARE)


def _tally(s: Standing, t: Turn, judge: float | None, rng: random.Random) -> None:
    s.asks += 1
    s.tool_turns += 1
    s.tool_failed += t.tool_failed
    if judge is not None:
        said = t.useful if rng.random() < judge else not t.useful
        n, k = s.judge_counted
        s.judge_counted = (n + 1, k + int(said))


def _play(scenario, horizon: int, seed: int, step) -> float:
    """One run's regret: the world (seeded, the same for every policy) played by `step(present, turns)`, which
    returns the member picked and learns what it may of the turn's answers."""
    world = random.Random(f"{scenario.name}/{horizon}/{seed}")
    members = list(scenario.members)
    world.shuffle(members)
    regret = 0.0
    for t in range(horizon):
        present = [m for m in members if m.arrives * horizon <= t]
        turns = {m.alias: outcome(world, m.at(t, horizon)) for m in members}
        pick = step(present, turns)
        regret += max(m.at(t, horizon) for m in present) - pick.at(t, horizon)
    return regret


def no_verdict(scenario, horizon: int, seed: int, judge: float | None, seats: int = 2) -> float:
    """Regret of rank() fed only tool-call evidence (and a judge's verdicts), over one run; `seats`: the served
    member and a shadow seat (2), or the served member alone (1)."""
    judging = random.Random(f"{scenario.name}/{horizon}/{seed}/judge")
    record: dict[str, Standing] = {}

    def step(present: list, turns: dict):
        order = [r.alias for r in rank([m.alias for m in present], record)]
        for alias in order[:seats]:   # the served member and one shadow seat
            _tally(record.setdefault(alias, Standing(median_seconds=1.0)), turns[alias], judge, judging)
        return next(m for m in present if m.alias == order[0])
    return _play(scenario, horizon, seed, step)


def thompson_all(scenario, horizon: int, seed: int) -> float:
    """Regret of Thompson sampling given the verdict on every answer it got."""
    rng = random.Random(f"{scenario.name}/{horizon}/{seed}/thompson")
    won: dict[str, list] = {}

    def step(present: list, turns: dict):
        if rng.random() < 0.1:
            pick = rng.choice(present)
        else:
            pick = max(present, key=lambda m: rng.betavariate(1 + won.get(m.alias, [0, 0])[0],
                                                              1 + won.get(m.alias, [0, 0])[1]))
        won.setdefault(pick.alias, [0, 0])[0 if turns[pick.alias].useful else 1] += 1
        return pick
    return _play(scenario, horizon, seed, step)


def regret_table(scenarios, horizon: int, runs: int) -> list[str]:
    heads = ["tools only, no shadow seat", "tools only"] + [f"tools + judge {j:.0%}" for j in JUDGES if j is not None]
    lines = [f"### No verdicts: {horizon:,} conversations, {runs} runs each (mean regret)", "",
             "| scenario | Thompson, every verdict | " + " | ".join(f"ours, {h}" for h in heads) + " |",
             "|---|---:|" + "---:|" * len(heads)]
    for sc in scenarios:
        th = [thompson_all(sc, horizon, i) for i in range(runs)]
        cells = [f"{statistics.mean(no_verdict(sc, horizon, i, j, seats) for i in range(runs)):.1f}"
                 for j, seats in [(None, 1)] + [(j, 2) for j in JUDGES]]
        lines.append(f"| {sc.name.split(' 1/')[0]} | {statistics.mean(th):.1f} | " + " | ".join(cells) + " |")
    return lines + [""]


# ---- how long a member keeps its turns once its tool calls fail ---------------------------------

def kept_turns(fail: float, seed: int, strikes: int = STRIKES, conversations: int = 300, length: int = 8,
               start: int = 100) -> tuple:
    """Three members whose tool calls were right; from conversation `start` the record's best starts failing a
    `fail` share of its tool calls. Each conversation has `length` turns, pinned to its member, which it leaves after
    `strikes` failing turns in a row (agentsigns.STRIKES; a number past `length`: it never leaves). Returns (its
    turns after the failures start, of them those after the first failing one in its conversation, the conversations
    it was still picked for)."""
    rng = random.Random(f"kept/{fail}/{seed}")
    record = {a: Standing(median_seconds=1.0) for a in ("x", "y", "z")}
    failing, turns_after, after_first, picked = None, 0, 0, 0
    for c in range(conversations):
        order = [r.alias for r in rank(list(record), record)]
        if c == start:
            failing = order[0]
        member, streak, seen_fail, first = order[0], 0, False, True
        for _ in range(length):
            fails = member == failing and rng.random() < fail
            s = record[member]
            s.asks += 1
            s.tool_turns += 1
            s.tool_failed += fails
            if member == failing:
                turns_after += 1
                after_first += seen_fail
                picked += first
            first = False
            seen_fail = seen_fail or fails
            streak = streak + 1 if fails else 0
            if streak >= strikes:   # the next turn goes to another member
                member = next(a for a in order if a != member)
                streak = 0
    return turns_after, after_first, picked


def kept_table(runs: int) -> list[str]:
    lines = ["### A member whose tool calls start to fail (8-turn conversations, 3 members, after 100 "
             f"conversations; {runs} runs)", "",
             "| its failing share | its turns after the failures start | of them after its first failing turn in that "
             "conversation | conversations still given to it | without moving on: its turns, after the first failing "
             "one |", "|---:|---:|---:|---:|---:|"]
    for fail in (1.0, 0.5, 0.25):
        got = [kept_turns(fail, i) for i in range(runs)]
        stay = [kept_turns(fail, i, strikes=10 ** 9) for i in range(runs)]
        lines.append(f"| {fail:.0%} | " + " | ".join(f"{statistics.mean(g[k] for g in got):.1f}" for k in range(3))
                     + f" | {statistics.mean(g[0] for g in stay):.1f}, {statistics.mean(g[1] for g in stay):.1f} |")
    return lines + [""]
