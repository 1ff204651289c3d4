"""One judgement, many verdicts, simulated: route regret and panels to settle when the user's actions judge points.

    python benchmarks/points.py                 # 12 scenarios at 400 and 3,000 conversations, a few minutes
    python benchmarks/points.py --quick         # smoke run: 3 runs of each, seconds
    python benchmarks/points.py --scenario degrade --conversations 3000 --runs 10
    python benchmarks/points.py --held-out      # other scenarios, not used to choose evidence.CLAIM_WEIGHT
    python benchmarks/points.py --claim-weight 1                     # the same code at another weight
    python benchmarks/points.py --drop-on answers                    # the drop check as it was before point claims
    python benchmarks/points.py --cost          # the referee's calls, tokens and added latency in a running service

Members have a hidden accuracy: the chance that a claim they make holds, and that an answer of theirs is useful.
Each conversation is a panel of every member present. The question has TOPICS checkable topics; each member speaks
to each with the chance ADDRESS and is right with its accuracy, so answers carry a few claims each and share some.
The points are what a referee that read the answers rightly would return: one per topic anyone spoke to, claiming
the first speaking seat's side, asserted by the seats on that side and denied by the others (core.points.Point,
ordered by core.points.ranked and filtered by core.points.select, the service's own code). With the scenario's
judging rate the user acts once on a panel: in the "seats" arm a verdict on one seat's answer (a seat drawn at
random), in the "points" arm a verdict on the panel's first contested point (core.evidence.claims turns it into a
real or false claim for every seat that took a side), or a seat verdict when no point is contested. Both arms play
the same draws (the questions, every member's stances and answers, which panels get an action, the seat a seat
verdict goes to). After each panel, route mode's pick is core.choose.rank(...)[0] on the record so far, with the
record's drop from core.rankings.drop (in both a judged claim weighs core.evidence.CLAIM_WEIGHT of a judged answer);
regret is the accuracy of the best member present minus the pick's, summed.
"Settled" counts the conversations after the best member last changed (a newcomer's arrival, a member's fall, else
the start) until route mode's pick is the best member in at least 90% of the runs, over every window of
SETTLE_WINDOW conversations to the end; user actions to settle are the actions taken in those conversations.
Seeded: the same command prints the same tables. Asserts nothing itself.
"""
from __future__ import annotations

import argparse
import math
import statistics
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.selection import HELD_OUT, KINDS, Member, Scenario, run_options  # noqa: E402  (after the path tweak)
from benchwarmers.core import choose, evidence  # noqa: E402
from benchwarmers.core.points import CONTESTED, Point, ranked, select  # noqa: E402
from benchwarmers.core.rankings import CLAIM, Standing, drop  # noqa: E402

HORIZONS = (400, 3000)
RUNS = {400: 160, 3000: 40}
TOPICS = 6               # checkable topics a question has
ADDRESS = 0.5            # the chance a member speaks to a topic: about three claims an answer, shared between seats
SETTLE = 0.9             # the best member picked in this share of the runs
SETTLE_WINDOW = 25       # ... over every window of this many conversations, to the end
ARMS = ("seats", "points")
SCENARIOS = [Scenario(f"{kind} 1/{judge}", members, judge, note)
             for kind, (members, note) in KINDS.items() for judge in (2, 5, 10)]
EXTRA = [   # held out as well: a five-seat panel of evenly spread members
    Scenario("five 1/5", [Member(f"m{round(p * 100)}", p) for p in (.8, .7, .6, .5, .4)], 5, "0.8 / 0.7 / ... / 0.4"),
]


@dataclass
class Options:
    drop_on: str = "all"             # what rankings.drop is given: every judged answer and claim (the record's way), or
                                     # "answers": judged answers only (the record before point claims)
    purpose: str = ""                # the collection's purpose ("review": lone claims are shown, and judged, too)
    cant_tell: float = 0.0           # the share of point verdicts that are "can't tell" (an action, no evidence)


@dataclass
class Run:
    regret: float
    best: bytearray                  # per conversation: was the pick the best member present
    acted: list = field(default_factory=list)   # per conversation: the actions taken so far
    stats: dict = field(default_factory=dict)   # the record at the end, per member


def blank() -> Standing:
    return Standing(median_seconds=1.0)


def panel_points(stances: list[dict]) -> tuple[list[Point], dict]:
    """The points of one panel, most contested first, and whether each is true (point id -> bool). stances[i] is
    seat i+1's {topic: right?}, for the topics it spoke to."""
    out, truth = [], {}
    for topic in range(TOPICS):
        speakers = [(n, s[topic]) for n, s in enumerate(stances, 1) if topic in s]
        if not speakers:
            continue
        side = speakers[0][1]                             # the point claims the first speaker's side
        asserts = tuple(n for n, right in speakers if right == side)
        denies = tuple(n for n, right in speakers if right != side)
        silent = tuple(n for n in range(1, len(stances) + 1) if n not in asserts and n not in denies)
        out.append(Point(f"t{topic}", f"topic {topic}", asserts, denies, silent,
                         {n: f"seat {n} on topic {topic}" for n in asserts + denies}))
        truth[f"t{topic}"] = side
    return ranked(out), truth


class Tally:
    """The record of one run: a Standing per member as Rankings.models gives it, and the evidence sequence
    rankings.drop reads."""

    def __init__(self, opts: Options):
        self.opts, self.stats, self.seen = opts, {}, {}

    def answer(self, alias: str, useful: bool) -> None:
        s = self.stats.setdefault(alias, blank())
        s.useful += useful
        s.not_useful += not useful
        self._saw(alias, s, int(useful), True)

    def picked(self, winner: str, losers: list) -> None:
        """A best pick: `winner` beat each of `losers` (benchmarks/selection.py --picks)."""
        s = self.stats.setdefault(winner, blank())
        s.wins += len(losers)
        for alias in losers:
            other = self.stats.setdefault(alias, blank())
            other.losses += 1

    def claim(self, alias: str, real: bool) -> None:
        s = self.stats.setdefault(alias, blank())
        if real:
            s.real_claims, s.point_real = s.real_claims + 1, s.point_real + 1
        else:
            s.false_claims, s.point_false = s.false_claims + 1, s.point_false + 1
        self._saw(alias, s, CLAIM + int(real), self.opts.drop_on == "all")

    def _saw(self, alias: str, s: Standing, outcome: int, counted: bool) -> None:
        if not counted:
            return
        seen = self.seen.setdefault(alias, [])
        seen.append(outcome)
        claims = (s.point_claims, s.point_real) if self.opts.drop_on == "all" else (0, 0)
        s.drop = drop(s.judged, s.useful, seen[-640:], *claims)


def act(arm: str, tally: Tally, aliases: list, stances: list, useful: list, seat: int, unsure: bool,
        opts: Options) -> None:
    """One user action on a panel: a seat verdict, a verdict on its first contested point, or its best pick (a useful
    answer, which of several drawn by the seat a seat verdict would go to; none when no answer was useful)."""
    if arm == "best":
        good = [n for n, u in enumerate(useful) if u]
        if good:
            chosen = good[seat % len(good)]
            tally.picked(aliases[chosen], [a for n, a in enumerate(aliases) if n != chosen])
        return
    if arm == "points":
        found, truth = panel_points(stances)
        shown = select(found, CONTESTED, opts.purpose)
        if shown:
            point = shown[0]
            verdict = None if unsure else truth[point.id]
            for c in evidence.claims(point, verdict):
                tally.claim(aliases[c.seat - 1], c.real)
            return
    tally.answer(aliases[seat], useful[seat])


def simulate(scenario: Scenario, arm: str, horizon: int, seed: int, opts: Options) -> Run:
    world = random.Random(f"points/{scenario.name}/{horizon}/{seed}")     # the same for both arms
    members = list(scenario.members)
    world.shuffle(members)
    tally, regret, best, acted, actions = Tally(opts), 0.0, bytearray(horizon), [], 0
    pick, stale = None, True
    for t in range(horizon):
        present = [m for m in members if m.arrives * horizon <= t]
        aliases = [m.alias for m in present]
        accuracy = [m.at(t, horizon) for m in present]
        acting = world.randrange(scenario.judge) == 0
        stances = [{k: world.random() < a for k in range(TOPICS) if world.random() < ADDRESS} for a in accuracy]
        useful = [world.random() < a for a in accuracy]
        seat, unsure = world.randrange(len(present)), world.random() < opts.cant_tell
        if stale or pick not in aliases:
            pick, stale = choose.rank(aliases, tally.stats)[0].alias, False
        top = max(accuracy)
        mine = accuracy[aliases.index(pick)]
        regret += top - mine
        best[t] = mine == top
        if acting:
            act(arm, tally, aliases, stances, useful, seat, unsure, opts)
            actions, stale = actions + 1, True
        acted.append(actions)
    return Run(regret, best, acted, tally.stats)


# ---- the figures ------------------------------------------------------------------------------

def change(scenario: Scenario, horizon: int) -> int:
    """The last conversation where the best member changes: a newcomer's arrival, a member's fall, else 0."""
    arrivals = [math.ceil(m.arrives * horizon) for m in scenario.members]
    falls = [horizon // 2 for m in scenario.members if m.worse is not None]
    return max(arrivals + falls)


def settled(runs: list[Run], horizon: int, start: int) -> int | None:
    """The first conversation from `start` on from which every window of SETTLE_WINDOW has the best member picked
    in SETTLE of the runs, as a count of conversations after `start`; None if that never holds before the end."""
    share = [sum(r.best[t] for r in runs) / len(runs) for t in range(start, horizon)]
    window = min(SETTLE_WINDOW, len(share))
    sums = [sum(share[t:t + window]) / window for t in range(len(share) - window + 1)]
    last_bad = max((t for t, v in enumerate(sums) if v < SETTLE), default=-1)
    return None if last_bad == len(sums) - 1 else last_bad + 1


@dataclass
class Compared:
    runs: dict                       # arm -> its runs
    mean: float                      # points - seats, the mean of the per-run regret differences
    noise: float                     # twice its standard error
    start: int                       # the last change of the best member (0, an arrival, a fall)
    settle: dict                     # arm -> the conversations after `start` it took to settle, or None
    actions: dict                    # arm -> the mean user actions taken in them, or None


def acted(run: Run, start: int, end: int) -> int:
    """The user actions taken from conversation `start` up to `end` (not counting `end`'s own)."""
    before = run.acted[start - 1] if start else 0
    return (run.acted[end - 1] if end else 0) - before


def compare(scenario: Scenario, horizon: int, runs: int, opts: Options) -> Compared:
    done = {arm: [simulate(scenario, arm, horizon, i, opts) for i in range(runs)] for arm in ARMS}
    diffs = [b.regret - a.regret for a, b in zip(done["seats"], done["points"])]
    noise = 2 * statistics.stdev(diffs) / math.sqrt(runs) if runs > 1 else 0.0
    start = change(scenario, horizon)
    settle = {arm: settled(done[arm], horizon, start) for arm in ARMS}
    actions = {arm: (statistics.mean(acted(r, start, start + settle[arm]) for r in done[arm])
                     if settle[arm] is not None else None) for arm in ARMS}
    return Compared(done, statistics.mean(diffs), noise, start, settle, actions)


def spread(values: list) -> str:
    return f"{statistics.mean(values):.1f} ± {statistics.pstdev(values):.1f}"


def fewer(c: Compared, horizon: int) -> str:
    """How many times fewer actions the points arm needed to settle."""
    seats, points = c.actions["seats"], c.actions["points"]
    if points is None:
        return "neither settles" if seats is None else "**seats only**"
    if seats is None:
        total = statistics.mean(acted(r, c.start, horizon) for r in c.runs["seats"])
        return f"> {total / max(points, 1):.1f}x"
    if seats <= 1 and points <= 1:
        return "both at once"
    return f"{seats / max(points, 1):.1f}x"


def row(scenario: Scenario, horizon: int, runs: int, opts: Options) -> str:
    c = compare(scenario, horizon, runs, opts)
    met = "yes" if c.mean <= 0 else ("within noise" if c.mean <= c.noise else "**no**")
    when = " / ".join(f"{c.settle[a]:,}" if c.settle[a] is not None else "not by the end" for a in ARMS)
    acts = " / ".join(f"{c.actions[a]:.0f}" if c.actions[a] is not None else "-" for a in ARMS)
    return (f"| {scenario.name} | {spread([r.regret for r in c.runs['seats']])} | "
            f"{spread([r.regret for r in c.runs['points']])} | {c.mean:+.1f} ± {c.noise:.1f} | {met} | {when} | "
            f"{acts} | {fewer(c, horizon)} |")


def table(horizon: int, runs: int, scenarios: list, opts: Options) -> list[str]:
    lines = [f"### {horizon:,} conversations, {runs} runs each", "",
             "| scenario | regret, seat verdicts: mean ± sd | regret, point verdicts | points - seats (paired, "
             "± 2 SE) | no worse | settled, conversations after the change: seats / points | user actions to settle: "
             "seats / points | fewer actions |",
             "|---|---:|---:|---:|---|---:|---:|---:|"]
    for scenario in scenarios:
        lines.append(row(scenario, horizon, runs, opts))
        print(lines[-1], file=sys.stderr, flush=True)   # progress, the tables follow on stdout
    return lines + [""]


def recorded(scenario: Scenario, horizon: int, runs: int, opts: Options) -> list[str]:
    """What the record says of each member's claims after the points arm, beside the truth: a point is judged
    because seats disagree on it, so the better seat of a split is more often the one right than its rate says."""
    done = [simulate(scenario, "points", horizon, i, opts) for i in range(runs)]
    lines = [f"#### Claim accuracy as recorded: {scenario.name}, {horizon:,} conversations, {runs} runs", "",
             "| member | true accuracy | judged claims (mean) | recorded claim accuracy (mean) |",
             "|---|---:|---:|---:|"]
    for m in sorted(scenario.members, key=lambda m: -m.accuracy):
        got = [(s.real_claims, s.false_claims) for s in (r.stats.get(m.alias, blank()) for r in done)]
        judged = [real + false for real, false in got]
        rates = [real / (real + false) for real, false in got if real + false]
        rate = f"{statistics.mean(rates):.2f}" if rates else "-"
        lines.append(f"| {m.alias} | {m.accuracy:.2f} | {statistics.mean(judged):.0f} | {rate} |")
    return lines + [""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    run_options(parser, [*KINDS, "five"])
    parser.add_argument("--held-out", action="store_true", help="benchmarks/selection.py's held-out scenarios "
                        "and a five-member one, instead")
    parser.add_argument("--claim-weight", type=float, help=f"try evidence.CLAIM_WEIGHT at this value (now "
                        f"{evidence.CLAIM_WEIGHT})")
    parser.add_argument("--drop-on", choices=("answers", "all"), default="all", help="what the drop check "
                        "reads: every judged answer and claim (as the record does; default) or judged answers only "
                        "(as it did before point claims)")
    parser.add_argument("--purpose", default="", help="the collection's purpose: review shows lone claims too")
    parser.add_argument("--recorded", action="store_true", help="also: each member's claim accuracy as the record "
                        "shows it after the points arm, beside the truth")
    parser.add_argument("--cant-tell", type=float, default=0.0, help="the share of point verdicts that are "
                        "\"can't tell\" (default 0)")
    parser.add_argument("--cost", type=int, nargs="?", const=40, metavar="ASKS", help="instead: the referee's cost "
                        "in a running service (benchmarks/refereecost.py), over ASKS asks each way (default 40)")
    args = parser.parse_args(argv)
    if args.cost is not None:
        if args.cost < 1:
            parser.error("--cost takes at least 1 ask")
        import refereecost    # a sibling script: it starts fastfake and the service
        refereecost.run(args.cost)
        return 0
    if args.claim_weight is not None:
        if not (math.isfinite(args.claim_weight) and args.claim_weight >= 0):
            parser.error("--claim-weight must be a number, 0 or more")
        evidence.CLAIM_WEIGHT = args.claim_weight      # this process only: the same code at another constant
    if not 0 <= args.cant_tell < 1:
        parser.error("--cant-tell must be at least 0 and below 1")
    horizons = args.conversations or list(HORIZONS)
    if any(h < 4 for h in horizons) or (args.runs is not None and args.runs < 2):
        parser.error("--conversations must be at least 4 and --runs at least 2")
    pool = HELD_OUT + EXTRA if args.held_out else SCENARIOS
    scenarios = [s for s in pool if not args.scenario or any(s.name.startswith(p) for p in args.scenario)]
    if not scenarios:
        parser.error("no scenario starts with " + " or ".join(args.scenario))
    opts = Options(args.drop_on, args.purpose, args.cant_tell)
    print(f"evidence.CLAIM_WEIGHT {evidence.CLAIM_WEIGHT}, EXPLORE {choose.EXPLORE}, PRIOR {choose.PRIOR}; drop check on "
          f"{'judged answers' if opts.drop_on == 'answers' else 'every judged answer and claim'}; purpose "
          f"{opts.purpose or 'none'}; can't tell {opts.cant_tell:.0%}. {TOPICS} topics a question, each spoken to "
          f"with the chance {ADDRESS}.\n")
    print("Scenarios (accuracy = the chance a claim holds and an answer is useful; 1/N = one panel in N gets a "
          "user action):")
    for note in dict.fromkeys(s.name.split(" 1/")[0] + ": " + s.note for s in scenarios):
        print(f"- {note}")
    print()
    for horizon in horizons:
        runs = args.runs or (3 if args.quick else RUNS.get(horizon, 40))
        print("\n".join(table(horizon, runs, scenarios, opts)))
        if args.recorded:
            for scenario in scenarios:
                print("\n".join(recorded(scenario, horizon, runs, opts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
