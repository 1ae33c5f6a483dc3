"""The rank bench's numpy-limit peer (``bench/_floor.py``) gives absrank's numbers, bit for bit.

``bench/ranks_load.py`` and ``bench/ranks_asgi.py`` call it the floor of any implementation:
that holds only while it computes the same ranks as absrank's linear tail and Eq. 28 (values
between ``f*`` and ``y_N``, no atom), so a change of either shows here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain import absrank
from app.domain.absrank import RankContext

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from _floor import Floor

F_OPT = 1.0


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n=st.sampled_from([50, 700, 5000]),
    ties=st.booleans(),
    k=st.sampled_from([2, 64, 512]),
    confidence=st.sampled_from([0.95, 0.5]),
    size=st.integers(1, 400),
)
def test_the_floor_ranks_as_absrank(
    seed: int, n: int, ties: bool, k: int, confidence: float, size: int
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, n)
    order = np.argsort(x**2)
    values = F_OPT + 100.0 * x[order] ** 2
    if ties:
        values[n // 2 :] = np.round(values[n // 2 :], 1)
    k = min(k, n)
    data = absrank.build_table_data(values, x[order][:k, None], k_exact=k)
    ctx = RankContext(F_OPT, None, 0.0, 0.5, "test", np.zeros(1), -np.ones(1), np.ones(1))
    curve = absrank.table_curve(data, ctx, tail="linear", confidence=confidence)
    v = data.values
    picks = v[rng.integers(0, v.size, size)]
    t = np.concatenate(
        [
            rng.uniform(v[0], v[-1], size),  # inside the samples
            F_OPT + (v[0] - F_OPT) * rng.uniform(1e-6, 1.0, size // 4 + 1),  # the tail
            picks,  # at knots, and next to them
            np.minimum(np.nextafter(picks, np.inf), v[-1]),
            np.maximum(np.nextafter(picks, -np.inf), np.nextafter(F_OPT, np.inf)),
        ]
    )
    rng.shuffle(t)
    want = absrank.ranks_from_curve(t, curve)
    got = Floor.of(data, F_OPT, confidence).rank(t)
    for name in ("log10_v", "v", "log10_lo", "log10_hi"):
        assert getattr(got, name).tobytes() == getattr(want, name).tobytes(), name
    assert got.method.tolist() == want.method.tolist()
