"""The compact pairwise shape (issue 15): lossless against the columns shape it replaced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from absrank_client.models import bradley_terry_probabilities, pair_rows, posthoc_matrices
from hypothesis import given, settings
from hypothesis import strategies as st

from app.services.comparison_answers import compact
from app.services.comparison_pairs import compact_columns, expand_pairs

OLD = Path(__file__).parents[2] / "data" / "comparison_shapes" / "columns_shape.json"


def _dumps(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


def test_old_recorded_answers_convert_and_the_client_sees_what_they_held() -> None:
    for old in json.loads(OLD.read_text()):
        new = compact(old)
        names = old["algorithms"]
        k = len(names)
        for path in (("relative", "posthoc", "pairs"), ("absolute", "pairwise")):
            o, n = old, new
            for key in path:
                o, n = o[key], n[key]
            assert "order" in n
            assert "i" not in n
            assert _dumps(pair_rows(n, names)) == _dumps(pair_rows(o, names))
            assert _dumps(expand_pairs(n, names)) == _dumps(o)
        op, np_ = old["relative"]["posthoc"], new["relative"]["posthoc"]
        assert "p_matrix" not in np_
        assert "log10_p_matrix" not in np_
        rebuilt = posthoc_matrices(np_, k)
        for key in ("p_matrix", "log10_p_matrix", "p_vs_control", "log10_p_vs_control"):
            assert _dumps(rebuilt[key]) == _dumps(op.get(key))
        bt_old, bt_new = old["relative"]["bradley_terry"], new["relative"]["bradley_terry"]
        # left out where the strengths give them bit for bit (kept for a degenerate fit)
        assert ("probabilities" in bt_new) == (len(bt_old["components"]) > 1)
        assert _dumps(bradley_terry_probabilities(bt_new)) == _dumps(bt_old["probabilities"])
        assert compact(new) == new  # compact answers read as they are


_value = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, None, "Infinity", "-Infinity"]),
)


@settings(max_examples=60, deadline=None)
@given(
    k=st.integers(2, 9),
    control=st.none() | st.integers(0, 8),
    data=st.data(),
)
def test_compact_columns_round_trip(k: int, control: int | None, data: Any) -> None:
    if control is not None and control >= k:
        control = k - 1
    if control is None:
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    else:
        pairs = [(control, j) for j in range(k) if j != control]
    n = len(pairs)
    pool = data.draw(st.lists(st.tuples(_value, _value, _value), min_size=1, max_size=4))
    picks = data.draw(st.lists(st.integers(0, len(pool) - 1), min_size=n, max_size=n))
    flip = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    rows = []
    for p, f in zip(picks, flip, strict=True):
        d, z, pv = pool[p]
        if f and isinstance(d, float) and isinstance(z, float):
            d, z = -d, -z
        rows.append((d, z, pv))
    names = [f"A{x}" for x in range(k)]
    cols: dict[str, Any] = {
        "i": [p[0] for p in pairs],
        "j": [p[1] for p in pairs],
        "a": [names[p[0]] for p in pairs],
        "b": [names[p[1]] for p in pairs],
        "rank_difference": [r[0] for r in rows],
        "z": [r[1] for r in rows],
        "p_value": [r[2] for r in rows],
        "method": ["exact"] * n,
    }
    c = compact_columns(cols, k)
    assert _dumps(expand_pairs(c, names)) == _dumps(cols)
    assert _dumps(pair_rows(c, names)) == _dumps(pair_rows(cols))
    nested = {
        "i": cols["i"],
        "j": cols["j"],
        "a": cols["a"],
        "b": cols["b"],
        "wilcoxon": {"p_value": cols["p_value"], "method": cols["method"]},
        "p_adjusted": cols["z"],
        "adjustment": "holm",
    }
    c = compact_columns(nested, k)
    assert _dumps(expand_pairs(c, names)) == _dumps(nested)
    assert _dumps(pair_rows(c, names)) == _dumps(pair_rows(nested))


def test_answers_stored_with_one_object_per_pair_read_compact_too() -> None:
    from app.services.comparison_answers import pairs_as_columns

    for old in json.loads(OLD.read_text()):
        rows = dict(old)
        rows["relative"] = {
            **old["relative"],
            "posthoc": {
                **old["relative"]["posthoc"],
                "pairs": pair_rows(old["relative"]["posthoc"]["pairs"]),
            },
        }
        rows["absolute"] = {
            **old["absolute"],
            "pairwise": pair_rows(old["absolute"]["pairwise"]),
        }
        assert _dumps(compact(pairs_as_columns(rows))) == _dumps(compact(old))
