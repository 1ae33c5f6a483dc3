"""The compact pairwise families of a comparison (issue 15): typed contracts against the
dict-based implementation they replaced, in one run.

Data: ``k`` algorithms × 30 problems (default 200, 19,900 pairs), uniform random values
(``numpy.random.default_rng(seed)``) as the relative values and as absolute ranks ``v`` (any
matrix in [0, 1] is one); Nemenyi, every other option the default. The post-hoc pairs and the
absolute pairwise tests are computed once (:func:`app.services.comparisons._posthoc_answer`,
:func:`app.services._comparison_absolute.pairwise_absolute`), then the answer is compacted,
alternately, by

* **new**: :func:`app.services.comparison_answers.compact` on the families as
  :class:`app.services.comparison_pairs.FamilyColumns` (its Pydantic models, dumped to JSON);
* **old**: the dict-based ``compact`` kept as the test oracle
  (tests/unit/services/_reference_compact.py) on the same families as JSON columns;

and the best and the median of ``--repeats`` are printed with the ratios new / old (the best
is the steadier on a shared machine) and whether both give the same JSON bytes. The rest of
``POST /v1/comparisons`` is the same code for both (bench/comparisons.py times it end to end).

Usage::

    .venv/bin/python bench/compact_pairs.py              # k = 200, 11 repeats
    .venv/bin/python bench/compact_pairs.py --k 50 --repeats 3

Benchmarks report, they do not assert.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import numpy as np


def families(k: int, seed: int) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A comparison's document with its post-hoc pairs and absolute pairwise tests."""
    from app.config import Settings
    from app.schemas.comparisons import ComparisonCreate
    from app.services import comparisons as svc
    from app.services._comparison_absolute import pairwise_absolute
    from app.services.serialize import jsonable

    rng = np.random.default_rng(seed)
    matrix = rng.random((30, k))
    names = tuple(f"A{i}" for i in range(k))
    body = ComparisonCreate(csv="algorithm,problem,run,value\n")
    posthoc = svc._posthoc_answer(svc._posthoc(matrix, body, None), names)
    pairwise, _, _ = pairwise_absolute(rng.random((30, k)), body, None, Settings(), names)
    pairs = posthoc.pop("pairs")
    relative = {"posthoc": jsonable(posthoc), "bradley_terry": {"strengths": [1.0] * k}}
    doc = {"algorithms": list(names), "relative": relative, "absolute": {"status": "complete"}}
    return _with(doc, pairs, pairwise), names


def _with(doc: dict[str, Any], pairs: object, pairwise: object) -> dict[str, Any]:
    relative = doc["relative"]
    return {
        **doc,
        "relative": {**relative, "posthoc": {**relative["posthoc"], "pairs": pairs}},
        "absolute": {**doc["absolute"], "pairwise": pairwise},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    from app.services.comparison_answers import compact
    from tests.unit.services import _reference_compact as ref

    doc, names = families(args.k, args.seed)
    pairs, pairwise = doc["relative"]["posthoc"]["pairs"], doc["absolute"]["pairwise"]
    typed = _with(doc, pairs, pairwise)
    as_json = _with(doc, pairs.json(names), pairwise.json(names))
    new_s: list[float] = []
    old_s: list[float] = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        new = compact(typed)
        new_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        old = ref.compact(as_json)
        old_s.append(time.perf_counter() - t0)
    same = json.dumps(new, allow_nan=False) == json.dumps(old, allow_nan=False)
    print(f"k = {args.k} ({args.k * (args.k - 1) // 2} pairs), {args.repeats} repeats")
    for label, stat in (("best", min), ("median", statistics.median)):
        n, o = stat(new_s), stat(old_s)
        print(f"  {label}: compact new {n * 1e3:.1f} ms / old {o * 1e3:.1f} ms = {n / o:.3f}x")
    print(f"  identical JSON: {same}")


if __name__ == "__main__":
    main()
