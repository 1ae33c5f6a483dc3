"""The compact pairwise shape (issue 15): lossless against the columns shape it replaced, and
byte for byte what its dict-based implementation gave (the oracle, ``_reference_compact``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from absrank_client.models import bradley_terry_probabilities, pair_rows, posthoc_matrices
from hypothesis import given, settings
from hypothesis import strategies as st

from app.schemas.comparisons import AbsolutePairs, ComparisonPosthocPairs
from app.services.comparison_answers import compact
from app.services.comparison_pairs import (
    AbsoluteColumns,
    CompactPairs,
    FamilyColumns,
    compact_columns,
    expand_pairs,
    int_column,
)
from tests.unit.services import _reference_compact as ref

OLD = Path(__file__).parents[2] / "data" / "comparison_shapes" / "columns_shape.json"


def _dumps(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


def _bytes(x: Any) -> str:
    """JSON text with the keys in their order (what is stored)."""
    return json.dumps(x, allow_nan=False)


def _columns(doc: dict[str, Any]) -> FamilyColumns:
    """A columns-shape family (JSON) as :class:`FamilyColumns` (absolute: with its tests)."""
    i, j = int_column(doc["i"]), int_column(doc["j"])
    skip = ("i", "j", "a", "b", "wilcoxon", "sign_test", "adjustment")
    flat = {key: v for key, v in doc.items() if key not in skip}
    if "wilcoxon" not in doc:
        return FamilyColumns(i, j, flat)
    return AbsoluteColumns(i, j, flat, doc["wilcoxon"], doc["sign_test"], doc["adjustment"])


def _parsed(doc: dict[str, Any]) -> CompactPairs:
    """A compact family (JSON) as its schema model."""
    if "wilcoxon" in doc:
        return AbsolutePairs.model_validate(doc)
    return ComparisonPosthocPairs.model_validate(doc)


def test_old_recorded_answers_convert_and_the_client_sees_what_they_held() -> None:
    for old in json.loads(OLD.read_text()):
        new = compact(old)
        assert _bytes(new) == _bytes(ref.compact(old))
        names = old["algorithms"]
        k = len(names)
        for path in (("relative", "posthoc", "pairs"), ("absolute", "pairwise")):
            o, n = old, new
            for key in path:
                o, n = o[key], n[key]
            assert "order" in n
            assert "i" not in n
            assert _dumps(pair_rows(n, names)) == _dumps(pair_rows(o, names))
            assert _dumps(expand_pairs(_parsed(n), k).json(names)) == _dumps(o)
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
    st.sampled_from([0, 1, -1, True, False, "1", "1.0", "true"]),  # 1, 1.0, True: three rows
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
    c = compact_columns(_columns(cols), k)
    assert _bytes(c.model_dump()) == _bytes(ref.compact_columns(cols, k))
    assert _dumps(expand_pairs(c, k).json(names)) == _dumps(cols)
    assert _dumps(pair_rows(c.model_dump(), names)) == _dumps(pair_rows(cols))
    nested = {
        "i": cols["i"],
        "j": cols["j"],
        "a": cols["a"],
        "b": cols["b"],
        "wilcoxon": {"p_value": cols["p_value"], "method": cols["method"]},
        "sign_test": {"p_value": cols["rank_difference"]},
        "p_adjusted": cols["z"],
        "adjustment": "holm",
    }
    c = compact_columns(_columns(nested), k)
    assert _bytes(c.model_dump()) == _bytes(ref.compact_columns(nested, k))
    assert _dumps(expand_pairs(c, k).json(names)) == _dumps(nested)
    assert _dumps(pair_rows(c.model_dump(), names)) == _dumps(pair_rows(nested))


def test_answers_stored_with_one_object_per_pair_read_compact_too() -> None:
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
        assert _dumps(compact(rows)) == _dumps(compact(old))
        assert _bytes(compact(rows)) == _bytes(ref.compact(ref.pairs_as_columns(rows)))
