"""The client reads a comparison's pairwise columns pair by pair, as it read the old lists."""

from __future__ import annotations

from absrank_client.models import Comparison, Posthoc, pair_rows

ROWS = [
    {"i": 0, "j": 1, "a": "A", "b": "B", "rank_difference": -0.5, "z": -1.0, "p_value": 0.3,
     "p_adjusted": 0.6, "log10_p_value": -0.52, "log10_p_adjusted": -0.22, "significant": False},
    {"i": 0, "j": 2, "a": "A", "b": "C", "rank_difference": -1.5, "z": "-Infinity",
     "p_value": 0.0, "p_adjusted": 0.0, "log10_p_value": -400.0, "log10_p_adjusted": -399.5,
     "significant": True},
]  # fmt: skip


def _columns(rows: list[dict]) -> dict:
    return {key: [r[key] for r in rows] for key in rows[0]}


def test_posthoc_pairs_from_columns_equal_those_from_rows() -> None:
    doc = {"procedure": "holm", "comparison": "all-pairs", "alpha": 0.05, "control": None}
    names = ("A", "B", "C")
    old = Posthoc.parse({**doc, "pairs": ROWS}, names)
    new = Posthoc.parse({**doc, "pairs": _columns(ROWS)}, names)
    assert new.pairs == old.pairs
    assert pair_rows(_columns(ROWS)) == ROWS


def test_absolute_pairs_from_columns_with_nested_tests_and_a_shared_adjustment() -> None:
    w = [{"p_value": 0.25, "log10_p_value": -0.6}, {"p_value": 0.5, "log10_p_value": -0.3}]
    s = [{"p_value": 1.0, "log10_p_value": 0.0}, {"p_value": 0.125, "log10_p_value": -0.9}]
    rows = [
        {"i": 0, "j": p + 1, "a": "A", "b": "BC"[p], "wilcoxon": w[p], "sign_test": s[p],
         "p_adjusted": 0.5, "log10_p_adjusted": -0.3, "adjustment": "holm",
         "significant": False}
        for p in range(2)
    ]  # fmt: skip
    columns = {
        **{k: [r[k] for r in rows] for k in ("i", "j", "a", "b", "p_adjusted")},
        "log10_p_adjusted": [-0.3, -0.3],
        "wilcoxon": _columns(w),
        "sign_test": _columns(s),
        "adjustment": "holm",
        "significant": [False, False],
    }
    assert [{k: r[k] for k in rows[0]} for r in pair_rows(columns)] == rows
    raw = {"algorithms": ["A", "B", "C"], "absolute": {"status": "complete"}}
    old = Comparison.parse({**raw, "absolute": {**raw["absolute"], "pairwise": rows}})
    new = Comparison.parse({**raw, "absolute": {**raw["absolute"], "pairwise": columns}})
    assert new.absolute_pairs == old.absolute_pairs
    assert len(new.absolute_pairs) == 2
