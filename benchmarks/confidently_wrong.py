"""The "confidently wrong" flag, simulated: its precision and recall after a given number of judged answers.

    python benchmarks/confidently_wrong.py            # 4,000 simulated models per count of judged answers, seconds
    python benchmarks/confidently_wrong.py --models 500

Each simulated model makes false claims at a known rate, drawn evenly between 0 and 0.6. Each judged answer carries
0 to 3 checked claims (none 40% of the time, one 30%, two 20%, three 10%: a verdict lists only the claims the judge
checked), each false at the model's rate. A model counts as truly "often confidently wrong" when at least TRUTH of
its claims are false. The flag is core.rankings.confidently_wrong, the service's own code, tried at several
thresholds (the confidently_wrong_ratio setting) and minimum numbers of false claims (WRONG_MIN_FALSE). Precision:
of the models flagged, the share truly often wrong; recall: of those truly often wrong, the share flagged. Seeded:
the same command prints the same tables. Asserts nothing.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchwarmers.core import rankings  # noqa: E402  (after the path tweak above)
from benchwarmers.settings import SETTINGS  # noqa: E402

TRUTH = 0.3                      # one checked claim in three or more false: "often confidently wrong"
CLAIMS = (0, 0, 0, 0, 1, 1, 1, 2, 2, 3)
COUNTS = (5, 10, 20, 50)         # judged answers per model
RATIOS = (0.25, 0.3, 0.35, 0.4, 0.5)
MIN_FALSE = (1, 3, 5)
BANDS = ((0.0, 0.1), (0.1, 0.2), (0.2, 0.25), (0.25, 0.3), (0.3, 0.35), (0.35, 0.4), (0.4, 0.5), (0.5, 0.6))


def models(judged: int, count: int) -> list[tuple[float, int, int]]:
    """(false-claim rate, real claims, false claims) of `count` simulated models after `judged` judged answers."""
    rng = random.Random(f"claims/{judged}")
    out = []
    for _ in range(count):
        rate, real, false = rng.uniform(0.0, 0.6), 0, 0
        for _ in range(judged):
            for _ in range(rng.choice(CLAIMS)):
                if rng.random() < rate:
                    false += 1
                else:
                    real += 1
        out.append((rate, real, false))
    return out


def flagged(sample: list, ratio: float, min_false: int) -> list[bool]:
    saved = rankings.WRONG_MIN_FALSE
    rankings.WRONG_MIN_FALSE = min_false
    try:
        return [rankings.confidently_wrong(real, false, ratio) for _, real, false in sample]
    finally:
        rankings.WRONG_MIN_FALSE = saved


def precision_recall(sample: list, flags: list[bool]) -> str:
    hits = sum(f and rate >= TRUTH for (rate, _, _), f in zip(sample, flags))
    truly = sum(rate >= TRUTH for rate, _, _ in sample)
    precision = f"{hits / sum(flags):.2f}" if any(flags) else "n/a"
    return f"{precision} | {hits / truly:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=4000, help="simulated models per count (default 4000)")
    args = parser.parse_args(argv)
    if args.models < 10:
        parser.error("--models must be at least 10")
    samples = {n: models(n, args.models) for n in COUNTS}
    default = SETTINGS["confidently_wrong_ratio"].default
    print(f"Truly often confidently wrong: at least {TRUTH:.0%} of checked claims false. Current defaults: "
          f"confidently_wrong_ratio {default}, at least {rankings.WRONG_MIN_FALSE} false claims.\n")
    print("| threshold | min false claims | " + " | ".join(f"after {n}: precision | recall" for n in COUNTS) + " |")
    print("|---:|---:|" + "---:|---:|" * len(COUNTS))
    for ratio in RATIOS:
        for min_false in MIN_FALSE:
            cells = [precision_recall(samples[n], flagged(samples[n], ratio, min_false)) for n in COUNTS]
            print(f"| {ratio} | {min_false} | " + " | ".join(cells) + " |")
    print(f"\nShare flagged at the defaults, by the model's true false-claim rate ({args.models} models per count):\n")
    print("| true rate | " + " | ".join(f"after {n}" for n in COUNTS) + " |")
    print("|---|" + "---:|" * len(COUNTS))
    for low, high in BANDS:
        cells = []
        for n in COUNTS:
            flags = flagged(samples[n], default, rankings.WRONG_MIN_FALSE)
            band = [f for (rate, _, _), f in zip(samples[n], flags) if low <= rate < high]
            cells.append(f"{sum(band) / len(band):.0%}" if band else "n/a")
        print(f"| {low:.2f}-{high:.2f} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
