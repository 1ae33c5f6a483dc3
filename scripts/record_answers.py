"""Record, or check, the answers of tests/api/test_recorded_answers.py.

    python scripts/record_answers.py           # check: the answers now equal the recordings
    python scripts/record_answers.py --write   # record them again into tests/data/recorded_answers

Run from the project root. Check exits 1 on a difference and names the first one per scenario.
A new recording states that the answers changed: record on purpose only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.api.test_recorded_answers import (
    RECORDED,
    SCENARIOS,
    describe_difference,
    dumps,
    live,
    normalized,
    path_of,
    recorded,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="record the answers again")
    parser.add_argument("-k", default="", help="only the scenarios whose name contains this")
    args = parser.parse_args()
    failed = 0
    RECORDED.mkdir(parents=True, exist_ok=True)
    for scenario in SCENARIOS:
        if args.k not in scenario.name:
            continue
        got = normalized(live(scenario))
        path = path_of(scenario)
        if args.write:
            path.write_text(dumps(got))
            print(f"wrote {path.relative_to(RECORDED.parents[2])} ({len(got)} answers)")
            continue
        if not path.exists():
            print(f"{scenario.name}: no recording")
            failed += 1
            continue
        want = recorded(scenario)
        diffs = [
            describe_difference(w["request"], w["answer"], g["answer"])
            for w, g in zip(want, got, strict=False)
            if w != g
        ]
        if len(want) != len(got):
            diffs.append(f"{len(want)} answers recorded, {len(got)} now")
        print(f"{scenario.name}: {'ok' if not diffs else 'DIFFERS: ' + diffs[0]}")
        failed += bool(diffs)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
