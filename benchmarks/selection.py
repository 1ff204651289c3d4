"""Route mode's choice of member, simulated: cumulative regret of core.choose.rank against Thompson sampling and random.

    python benchmarks/selection.py                 # every scenario, 40 runs of 3,000 conversations each
    python benchmarks/selection.py --runs 5 --conversations 1000     # quicker

Members have hidden accuracies (the chance a judged answer is useful). Each conversation the router picks one member
from the record it has so far (the same dict shape Record.models returns: asks, judged, useful, failures,
median_seconds); the member answers; with some probability a verdict arrives and joins the record. Regret is the
hidden accuracy of the best member available minus that of the one picked, summed over the conversations and
averaged over the runs. Seeded: the same command prints the same table. Asserts nothing.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchwarmers.core.choose import WARMUP, rank  # noqa: E402  (after the path tweak above)
from benchwarmers.core.record import wilson_lower  # noqa: E402


@dataclass
class Member:
    alias: str
    accuracy: float                  # hidden: the chance a judged answer is useful
    arrives: int = 0                 # the conversation at which it joins the collection
    seconds: float = 2.0


@dataclass
class Scenario:
    name: str
    members: list
    judge_rate: float = 0.5          # the share of conversations someone judges
    note: str = ""


SCENARIOS = [
    Scenario("clear", [Member("m80", 0.8), Member("m60", 0.6), Member("m40", 0.4)],
             note="3 members 0.8 / 0.6 / 0.4, half the conversations judged"),
    Scenario("close", [Member(f"m{int(p * 100)}", p) for p in (0.70, 0.68, 0.66, 0.64, 0.62)],
             note="5 members 0.70 ... 0.62, half judged"),
    Scenario("newcomer", [Member("m60", 0.6), Member("m50", 0.5), Member("m40", 0.4),
                          Member("new85", 0.85, arrives=1000)],
             note="0.6 / 0.5 / 0.4, then a 0.85 newcomer at conversation 1,000"),
    Scenario("sparse", [Member("m75", 0.75), Member("m65", 0.65), Member("m55", 0.55)], judge_rate=0.1,
             note="0.75 / 0.65 / 0.55, one conversation in ten judged"),
]


# ---- the policies: (available aliases, stats, rng) -> alias ------------------------------------

def ours(aliases: list, stats: dict, rng: random.Random) -> str:
    return rank(aliases, stats)[0].alias


def lower_bound(aliases: list, stats: dict, rng: random.Random) -> str:
    """The rule choose.rank had before this benchmark: warm-up, then the greatest Wilson lower bound."""
    def score(alias: str) -> tuple:
        s = stats.get(alias, {})
        if s.get("judged", 0) < WARMUP:
            return (1, -s.get("asks", 0))
        return (0, wilson_lower(s["useful"], s["judged"]))
    return max(aliases, key=score)    # max keeps the first of equals, as rank's stable sort does


def thompson(aliases: list, stats: dict, rng: random.Random, explore: float = 0.1) -> str:
    """Thompson sampling on Beta(1 + useful, 1 + not useful), and a uniform pick 10% of the time."""
    if rng.random() < explore:
        return rng.choice(aliases)

    def draw(alias: str) -> float:
        s = stats.get(alias, {})
        return rng.betavariate(1 + s.get("useful", 0), 1 + s.get("judged", 0) - s.get("useful", 0))
    return max(aliases, key=draw)


def uniform(aliases: list, stats: dict, rng: random.Random) -> str:
    return rng.choice(aliases)


POLICIES = {"ours": ("choose.rank (Wilson upper bound)", ours),
            "lower": ("before: Wilson lower bound", lower_bound),
            "thompson": ("Thompson + 10% explore", thompson),
            "random": ("random", uniform)}


# ---- the simulation ---------------------------------------------------------------------------

@dataclass
class Run:
    regret: float = 0.0
    judged: dict = field(default_factory=dict)


def simulate(scenario: Scenario, policy, conversations: int, seed: str) -> Run:
    rng = random.Random(seed)
    stats: dict[str, dict] = {}
    run = Run(judged={m.alias: 0 for m in scenario.members})
    for t in range(conversations):
        present = [m for m in scenario.members if m.arrives <= t]
        aliases = [m.alias for m in present]
        pick = policy(aliases, stats, rng)
        member = next(m for m in present if m.alias == pick)
        run.regret += max(m.accuracy for m in present) - member.accuracy
        s = stats.setdefault(pick, {"asks": 0, "judged": 0, "useful": 0, "failures": 0,
                                    "median_seconds": member.seconds})
        s["asks"] += 1
        if rng.random() < scenario.judge_rate:
            s["judged"] += 1
            s["useful"] += rng.random() < member.accuracy
            run.judged[pick] += 1
    return run


def table(scenario: Scenario, conversations: int, runs: int) -> list[str]:
    aliases = [m.alias for m in scenario.members]
    lines = [f"### {scenario.name}: {scenario.note}", "",
             "| policy | regret (mean) | regret (min-max) | " + " | ".join(f"judged {a}" for a in aliases) + " |",
             "|---|---:|---:|" + "---:|" * len(aliases)]
    for key, (name, policy) in POLICIES.items():
        done = [simulate(scenario, policy, conversations, f"{scenario.name}/{key}/{i}") for i in range(runs)]
        regrets = [r.regret for r in done]
        judged = [statistics.mean(r.judged[a] for r in done) for a in aliases]
        lines.append(f"| {name} | {statistics.mean(regrets):.1f} | {min(regrets):.0f}-{max(regrets):.0f} | "
                     + " | ".join(f"{j:.0f}" for j in judged) + " |")
    return lines + [""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=3000, help="conversations per run (default 3000)")
    parser.add_argument("--runs", type=int, default=40, help="seeded runs averaged per scenario (default 40)")
    parser.add_argument("--scenario", action="append", choices=[s.name for s in SCENARIOS],
                        help="only this scenario (repeatable)")
    args = parser.parse_args(argv)
    print(f"Cumulative regret over {args.conversations} conversations, mean of {args.runs} seeded runs "
          "(lower is better); judged asks each member got (mean).\n")
    for scenario in SCENARIOS:
        if not args.scenario or scenario.name in args.scenario:
            print("\n".join(table(scenario, args.conversations, args.runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
