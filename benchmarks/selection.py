"""Route mode's choice of member, simulated: cumulative regret of core.choose.rank against Thompson sampling.

    python benchmarks/selection.py              # 12 scenarios at 400 and 3,000 conversations, about a minute
    python benchmarks/selection.py --quick      # smoke run: 3 runs of each, seconds
    python benchmarks/selection.py --scenario degrade --conversations 3000 --runs 10
    python benchmarks/selection.py --held-out   # other scenarios, not used to choose the rule's constants
    python benchmarks/selection.py --explore 2 --drop-z 3    # the same rule at other constants
    python benchmarks/selection.py --no-verdicts    # no user verdict: tool calls and a judge (selection_signs.py)
    python benchmarks/selection.py --picks      # best picks against seat and point verdicts, action for action
    python benchmarks/selection.py --picks --pick-weight 1 --runs 40    # at another evidence.PICK_WEIGHT

Members have hidden accuracies (the chance an answer is useful). Each conversation the router picks one member from
the record so far, as Rankings.models gives it (a Standing: its judged answers, asks, failures, median seconds, drop);
the member answers; with the scenario's judging rate a verdict arrives and joins the record. The pick is
core.choose.rank's first and the drop is core.rankings.drop, the service's own code: a change to the rule is measured
by the next run. Thompson sampling (Beta(1 + useful, 1 + not useful), a uniform pick 10% of the time) plays the same
draws: each run fixes, per conversation, whether it is judged and how every member would fare, and the order the
members are listed in. Regret is the accuracy of the best member then present minus that of the one picked, summed
over the conversations. With --picks, each conversation is a panel of every member present and the user's action (in
one conversation in `judge`) is, in three arms on the same draws, a verdict on one seat, a verdict on the panel's
first contested point (benchmarks/points.py's panels and points), or the panel's best pick: a useful answer (which
of several: the one the seat verdict's draw names), winning over each other seat, none when no answer was useful;
each comparison weighs core.evidence.PICK_WEIGHT of a judged answer in route choice's record. The table gives the
conversations after the best member last changed until route choice settles on it (benchmarks/points.py's
`settled`), and the user actions spent in them. Seeded: the same command prints the same tables. Asserts nothing itself: tests/test_choose.py
reruns two scenarios through paired() and fails when ours is worse than Thompson on the mean.
"""
from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchwarmers.core import choose, evidence, rankings  # noqa: E402  (after the path tweak above)
from benchwarmers.core.choose import rank  # noqa: E402
from benchwarmers.core.rankings import Standing, drop  # noqa: E402
from benchmarks import selection_signs  # noqa: E402

HORIZONS = (400, 3000)
RUNS = {400: 160, 3000: 40}   # the short horizon is cheap and noisier: more runs


@dataclass
class Member:
    alias: str
    accuracy: float                  # hidden: the chance an answer is useful
    arrives: float = 0.0             # the share of the conversations gone when it joins the collection
    worse: float | None = None       # its accuracy from halfway on (a model silently swapped upstream)

    def at(self, t: int, horizon: int) -> float:
        return self.worse if self.worse is not None and t >= horizon // 2 else self.accuracy


@dataclass
class Scenario:
    name: str
    members: list
    judge: int                       # one conversation in `judge` gets a verdict
    note: str


KINDS = {
    "clear": ([Member("m80", .8), Member("m60", .6), Member("m40", .4)], "0.8 / 0.6 / 0.4"),
    "close": ([Member(f"m{round(p * 100)}", p) for p in (.70, .68, .66, .64, .62)], "0.70 / 0.68 / ... / 0.62"),
    "newcomer": ([Member("m60", .6), Member("m50", .5), Member("m40", .4), Member("new85", .85, arrives=1 / 3)],
                 "0.6 / 0.5 / 0.4, a 0.85 joins a third of the way in"),
    "degrade": ([Member("m80", .8, worse=.4), Member("m60", .6), Member("m50", .5)],
                "0.8 / 0.6 / 0.5, the 0.8 falls to 0.4 halfway"),
}
SCENARIOS = [Scenario(f"{kind} 1/{judge}", members, judge, note)
             for kind, (members, note) in KINDS.items() for judge in (2, 5, 10)]
# Not used to choose choose.EXPLORE, choose.PRIOR or rankings.DROP_Z: a check that they were not fitted to the above.
HELD_OUT = [
    Scenario("top-heavy 1/5", [Member("a90", .9), Member("b85", .85), Member("c50", .5)], 5, "0.9 / 0.85 / 0.5"),
    Scenario("pair 1/10", [Member("a55", .55), Member("b45", .45)], 10, "0.55 / 0.45"),
    Scenario("eight 1/5", [Member(f"m{40 + 5 * i}", .4 + .05 * i) for i in range(8)], 5, "0.40 / 0.45 / ... / 0.75"),
    Scenario("rare 1/20", [Member("m75", .75), Member("m60", .6), Member("m45", .45)], 20, "0.75 / 0.6 / 0.45"),
    Scenario("small drop 1/5", [Member("m70", .7, worse=.5), Member("m65", .65), Member("m55", .55)], 5,
             "0.7 / 0.65 / 0.55, the 0.7 falls to 0.5 halfway"),
    Scenario("all poor 1/5", [Member("m30", .3), Member("m20", .2), Member("m10", .1)], 5, "0.3 / 0.2 / 0.1"),
]


# ---- the policies: (aliases, record, rng) -> alias -------------------------------------------

def ours(aliases: list, record: dict, rng: random.Random) -> str:
    return rank(aliases, record)[0].alias


def thompson(aliases: list, record: dict, rng: random.Random, explore: float = 0.1) -> str:
    if rng.random() < explore:
        return rng.choice(aliases)

    def draw(alias: str) -> float:
        s = record.get(alias) or Standing()
        return rng.betavariate(1 + s.useful, 1 + s.not_useful)
    return max(aliases, key=draw)


POLICIES = {"ours": ours, "thompson": thompson}


# ---- the simulation ---------------------------------------------------------------------------

@dataclass
class Run:
    regret: float
    settled: float                   # the best member's share of the picks in the last quarter


def simulate(scenario: Scenario, policy, horizon: int, seed: int) -> Run:
    world = random.Random(f"{scenario.name}/{horizon}/{seed}")   # the same for every policy
    choices = random.Random(f"{scenario.name}/{horizon}/{seed}/{policy.__name__}")
    members = list(scenario.members)
    world.shuffle(members)
    record: dict[str, Standing] = {}
    verdicts: dict[str, list] = {}
    regret, best_picks, last_quarter = 0.0, 0, horizon - horizon // 4
    for t in range(horizon):
        present = [m for m in members if m.arrives * horizon <= t]
        judged = world.randrange(scenario.judge) == 0
        draws = {m.alias: world.random() for m in members}
        pick = policy([m.alias for m in present], record, choices)
        member = next(m for m in present if m.alias == pick)
        best = max(m.at(t, horizon) for m in present)
        regret += best - member.at(t, horizon)
        best_picks += t >= last_quarter and member.at(t, horizon) == best
        s = record.setdefault(pick, Standing(median_seconds=1.0))
        s.asks += 1
        if judged:
            useful = int(draws[pick] < member.at(t, horizon))
            outcomes = verdicts.setdefault(pick, [])
            outcomes.append(useful)
            s.useful += useful
            s.not_useful += 1 - useful
            s.drop = drop(s.judged, s.useful, outcomes)
    return Run(regret, best_picks / (horizon - last_quarter))


def spread(values: list) -> str:
    p90 = sorted(values)[len(values) * 9 // 10]
    return f"{statistics.mean(values):.1f} ± {statistics.pstdev(values):.1f} (p90 {p90:.0f})"


@dataclass
class Paired:
    done: dict                       # policy name -> its runs
    mean: float                      # ours - Thompson, the mean of the per-run regret differences
    noise: float                     # twice the standard error of that mean


def paired(scenario: Scenario, horizon: int, runs: int) -> Paired:
    done = {key: [simulate(scenario, policy, horizon, i) for i in range(runs)] for key, policy in POLICIES.items()}
    diffs = [a.regret - b.regret for a, b in zip(done["ours"], done["thompson"])]
    noise = 2 * statistics.stdev(diffs) / math.sqrt(runs) if runs > 1 else 0.0
    return Paired(done, statistics.mean(diffs), noise)


def row(scenario: Scenario, horizon: int, runs: int) -> str:
    p = paired(scenario, horizon, runs)
    done, mean, noise = p.done, p.mean, p.noise
    ours_r, thompson_r = ([r.regret for r in done[k]] for k in ("ours", "thompson"))
    met = "yes" if mean <= 0 else ("within noise" if mean <= noise else "**no**")
    settled = " / ".join(f"{statistics.mean(r.settled for r in done[k]):.0%}" for k in ("ours", "thompson"))
    return (f"| {scenario.name} | {spread(ours_r)} | {spread(thompson_r)} | {mean:+.1f} ± {noise:.1f} | {met} | "
            f"{settled} |")


def table(horizon: int, runs: int, scenarios: list) -> list[str]:
    lines = [f"### {horizon:,} conversations, {runs} runs each", "",
             "| scenario | regret, ours: mean ± sd (p90) | regret, Thompson | ours - Thompson (paired, ± 2 SE) | "
             "no worse | best member's share of the last quarter, ours / Thompson |",
             "|---|---:|---:|---:|---|---:|"]
    for scenario in scenarios:
        lines.append(row(scenario, horizon, runs))
        print(lines[-1], file=sys.stderr, flush=True)   # progress, the tables follow on stdout
    return lines + [""]


PICK_ARMS = ("seats", "points", "best")


def picks_table(horizon: int, runs: int, scenarios: list) -> list[str]:
    """Best picks against seat and point verdicts: conversations and user actions until route choice settles."""
    import benchmarks.points as pts     # it imports this module: read once both are loaded
    opts = pts.Options()
    lines = [f"### best picks, {horizon:,} conversations, {runs} runs each, PICK_WEIGHT {evidence.PICK_WEIGHT}", "",
             "| scenario | settled, conversations after the change: seats / points / best | user actions to settle: "
             "seats / points / best | regret: seats / points / best |", "|---|---:|---:|---:|"]
    for scenario in scenarios:
        done = {arm: [pts.simulate(scenario, arm, horizon, i, opts) for i in range(runs)] for arm in PICK_ARMS}
        start = pts.change(scenario, horizon)
        settle = {arm: pts.settled(done[arm], horizon, start) for arm in PICK_ARMS}
        acts = {arm: statistics.mean(pts.acted(r, start, start + settle[arm]) for r in done[arm])
                if settle[arm] is not None else None for arm in PICK_ARMS}
        when = " / ".join(f"{settle[a]:,}" if settle[a] is not None else "not by the end" for a in PICK_ARMS)
        spent = " / ".join(f"{acts[a]:.0f}" if acts[a] is not None else "-" for a in PICK_ARMS)
        regret = " / ".join(f"{statistics.mean(r.regret for r in done[a]):.1f}" for a in PICK_ARMS)
        lines.append(f"| {scenario.name} | {when} | {spent} | {regret} |")
        print(lines[-1], file=sys.stderr, flush=True)
    return lines + [""]


def run_options(parser: argparse.ArgumentParser, kinds) -> None:
    """The options every simulation here takes: a smoke run, the horizons, the runs, the scenarios."""
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 runs per scenario and horizon")
    parser.add_argument("--conversations", type=int, action="append", help="a horizon (repeatable; default 400 "
                        "and 3000)")
    parser.add_argument("--runs", type=int, help="seeded runs per scenario (default 160 at 400, 40 at 3000)")
    parser.add_argument("--scenario", action="append", help="only scenarios whose name starts with this "
                        "(repeatable): " + ", ".join(kinds))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    run_options(parser, KINDS)
    parser.add_argument("--held-out", action="store_true", help="the scenarios the rule's constants were not "
                        "chosen on, instead: " + ", ".join(s.name for s in HELD_OUT))
    parser.add_argument("--explore", type=float, help=f"try choose.EXPLORE at this value (now {choose.EXPLORE})")
    parser.add_argument("--prior", type=int, help=f"try choose.PRIOR at this value (now {choose.PRIOR})")
    parser.add_argument("--no-verdicts", action="store_true",
                        help="route choice with no user verdict (tool-call evidence, a judge of given accuracy) "
                        "against Thompson with every verdict, and how many turns a member keeps once its tool calls "
                        "fail (benchmarks/selection_signs.py)")
    parser.add_argument("--drop-z", type=float, help=f"try rankings.DROP_Z at this value (now {rankings.DROP_Z}); "
                        "1e9 turns the drop check off")
    parser.add_argument("--picks", action="store_true", help="instead: best picks against seat and point verdicts, "
                        "action for action (panels of every member)")
    parser.add_argument("--pick-weight", type=float, help=f"try evidence.PICK_WEIGHT at this value (now "
                        f"{evidence.PICK_WEIGHT})")
    args = parser.parse_args(argv)
    for module, name, value in ((choose, "EXPLORE", args.explore), (choose, "PRIOR", args.prior),
                                (rankings, "DROP_Z", args.drop_z), (evidence, "PICK_WEIGHT", args.pick_weight)):
        if value is not None:
            if value < 0:
                parser.error(f"--{name.lower().replace('_', '-')} cannot be negative")
            setattr(module, name, value)   # this process only: the same code at another constant
    horizons = args.conversations or list(HORIZONS)
    if any(h < 4 for h in horizons) or (args.runs is not None and args.runs < 1):
        parser.error("--conversations must be at least 4 and --runs at least 1")
    scenarios = [s for s in (HELD_OUT if args.held_out else SCENARIOS)
                 if not args.scenario or any(s.name.startswith(p) for p in args.scenario)]
    if not scenarios:
        parser.error("no scenario starts with " + " or ".join(args.scenario))
    print(f"choose.EXPLORE {choose.EXPLORE}, choose.PRIOR {choose.PRIOR}, rankings.DROP_Z {rankings.DROP_Z}.\n")
    print("Scenarios (accuracy = the chance an answer is useful; 1/N = one conversation in N judged):")
    for note in dict.fromkeys(s.name.split(" 1/")[0] + ": " + s.note for s in scenarios):
        print(f"- {note}")
    print()
    for horizon in horizons:
        runs = args.runs or (3 if args.quick else RUNS.get(horizon, 40))
        if args.no_verdicts:   # one scenario of each kind: no verdicts, so their judging rates do not matter
            kinds = list({s.name.split(" 1/")[0]: s for s in scenarios}.values())
            runs = args.runs or (3 if args.quick else RUNS.get(horizon, 40) // 4)
            print("\n".join(selection_signs.regret_table(kinds, horizon, runs)))
        else:
            print("\n".join((picks_table if args.picks else table)(horizon, runs, scenarios)))
    if args.no_verdicts:
        print("\n".join(selection_signs.kept_table(args.runs or (3 if args.quick else 40))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
