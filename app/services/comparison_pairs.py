"""The compact shape of a comparison's pairwise results (issue 15): one row per *distinct*
result and a small integer code per pair.

A comparison of k algorithms has up to k(k − 1)/2 pairs (19,900 at k = 200), but far fewer
distinct results: the sign test of a pair depends only on its counts, the exact signed-rank
test on ``(n_effective, statistic)``, Nemenyi's p-values on ``|R_i − R_j|``. So each family is
sent as :class:`app.schemas.comparisons.ComparisonPosthocPairs` (the post-hoc pairs) or
:class:`app.schemas.comparisons.AbsolutePairs` (the absolute pairwise tests):

* ``order``: ``upper-triangle`` — pair ``p`` is the p-th ``(i, j)``, ``i < j``, row by row
  (``(0, 1), (0, 2), …, (0, k−1), (1, 2), …``); or ``listed`` — pair ``p`` is ``(i[p], j[p])``
  (families against a control);
* per group of fields (the post-hoc pairs: one group, at the top; the absolute pairwise
  tests: ``wilcoxon``, ``sign_test`` and ``adjusted``, the family's adjusted p-values):
  ``constant``, fields equal for every pair, given once (``"method": "exact"``);
  ``distinct``, the other fields, one list per field, one entry per distinct result; and
  ``code``, per pair, the row of ``distinct`` it has; a negative code ``c`` means row
  ``−1 − c`` with the ``negated`` fields (``rank_difference``, ``z``: odd in ``(i, j)``)
  negated — used only where that reproduces the pair's values exactly.

Lossless: every value keeps its JSON text (full float precision); the client
(``absrank_client.models.pair_rows``) expands it back to the columns, and
:func:`expand_pairs` does the same here (tests check ``expand(compact(x)) == x``).

The columns a family is computed in (and answers stored before the compact shape hold) are a
:class:`FamilyColumns`; :func:`stored_columns` reads them from a stored answer's JSON.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from app.schemas.comparisons import AbsolutePairs, ComparisonPosthocPairs, PairGroup, PairOrder

#: Fields of the post-hoc pairs that change sign when ``i`` and ``j`` swap.
ODD_FIELDS = ("rank_difference", "z")
#: The nested tests of the absolute pairwise family, in the answer's order.
ABSOLUTE_TESTS = ("wilcoxon", "sign_test")
#: The post-hoc pairs' fields (:class:`app.domain.ranktests.PairComparison` without ``i``,
#: ``j``), in the answer's order.
POSTHOC_FIELDS = (
    *("rank_difference", "z", "p_value", "p_adjusted"),
    *("log10_p_value", "log10_p_adjusted", "significant"),
)
#: The flat fields of the absolute pairwise family: the family's adjustment of each pair.
ADJUSTED = ("p_adjusted", "log10_p_adjusted", "significant")
_INDEX = ("i", "j", "a", "b")

Column = list[JsonValue]
CompactPairs = ComparisonPosthocPairs | AbsolutePairs


@dataclass(frozen=True)
class FamilyColumns:
    """A family of pairs as columns (the post-hoc pairs): pair ``p`` is ``(i[p], j[p])``.

    Attributes
    ----------
    i, j : list of int
        The algorithms (indices) of each pair.
    fields : dict of str to list
        One JSON-ready column per field (the post-hoc pairs: :data:`POSTHOC_FIELDS`; the
        absolute pairwise tests: :data:`ADJUSTED`), in the answer's order.
    """

    i: list[int]
    j: list[int]
    fields: dict[str, Column]

    def json(self, names: Sequence[str]) -> dict[str, JsonValue]:
        """The columns shape answers had before the compact one: ``i``, ``j``, ``a``, ``b``
        (names), then the fields."""
        out: dict[str, JsonValue] = {
            "i": list(self.i),
            "j": list(self.j),
            "a": [names[x] for x in self.i],
            "b": [names[x] for x in self.j],
        }
        out.update(self.fields)
        return out


@dataclass(frozen=True)
class AbsoluteColumns(FamilyColumns):
    """The absolute pairwise tests as columns: ``fields`` are the family's adjustment of each
    pair (:data:`ADJUSTED`).

    Attributes
    ----------
    wilcoxon, sign_test : dict of str to list
        One JSON-ready column per field of each pair's test
        (:class:`app.domain.paired.WilcoxonResult`, :class:`app.domain.paired.SignTestResult`).
    adjustment : str
        The family's adjustment (every pair's).
    """

    wilcoxon: dict[str, Column]
    sign_test: dict[str, Column]
    adjustment: str

    def json(self, names: Sequence[str]) -> dict[str, JsonValue]:
        """The columns shape: ``i``, ``j``, ``a``, ``b``, the tests, the fields, then
        ``adjustment``."""
        out = super().json(names)
        fields = {f: out.pop(f) for f in self.fields}
        out["wilcoxon"], out["sign_test"] = dict(self.wilcoxon), dict(self.sign_test)
        return {**out, **fields, "adjustment": self.adjustment}


def _negated(value: JsonValue) -> JsonValue:
    return -value if isinstance(value, float) and math.isfinite(value) else None


def _group(flat: Mapping[str, Column]) -> PairGroup:
    """Per-pair columns as ``code``, ``negated``, ``constant``, ``distinct``.

    Two pairs share a row when their values have the same JSON text; the key compared is
    their ``repr``, which tells the same values apart (a float's is its shortest round-trip
    text, ``-0.0`` included; ints, bools, ``None`` and strings each print their own way), at
    half the cost of ``json.dumps`` (the columns hold Python scalars only: ``result_columns``
    and stored JSON)."""
    names = list(flat)
    odd = [names.index(f) for f in ODD_FIELDS if f in flat]
    rows: dict[str, int] = {}
    table: list[tuple[JsonValue, ...]] = []
    code: list[int] = []
    for values in zip(*(flat[f] for f in names), strict=True):
        key = repr(values)
        row = rows.get(key)
        if row is not None:
            code.append(row)
            continue
        if odd:
            mirror = list(values)
            for o in odd:
                mirror[o] = _negated(values[o])
            if all(mirror[o] is not None for o in odd):
                row = rows.get(repr(tuple(mirror)))
                if row is not None:
                    code.append(-1 - row)
                    continue
        rows[key] = len(table)
        code.append(len(table))
        table.append(values)
    mirrored = any(c < 0 for c in code)
    constant: dict[str, JsonValue] = {}
    distinct: dict[str, Column] = {}
    for c, f in enumerate(names):
        col = [r[c] for r in table]
        if len({repr(v) for v in col}) == 1 and not (mirrored and c in odd):
            constant[f] = col[0]
        else:
            distinct[f] = col
    negated = [names[o] for o in odd if names[o] in distinct]
    return PairGroup(code=code, negated=negated, constant=constant, distinct=distinct)


def pair_order(i: list[int], j: list[int], k: int) -> PairOrder:
    """Which pair entry ``p`` is: ``upper-triangle`` when the pairs are every ``(x, y)``,
    ``x < y``, row by row, else ``listed`` (with ``i`` and ``j``)."""
    triangle = [(x, y) for x in range(k) for y in range(x + 1, k)]
    if triangle == list(zip(i, j, strict=True)):
        return PairOrder(order="upper-triangle", n_pairs=len(i))
    return PairOrder(order="listed", n_pairs=len(i), i=list(i), j=list(j))


def compact_posthoc(columns: FamilyColumns, k: int) -> ComparisonPosthocPairs:
    """The post-hoc pairs in the compact shape: one group of all fields."""
    order, group = pair_order(columns.i, columns.j, k), _group(columns.fields)
    return ComparisonPosthocPairs(
        order=order.order,
        n_pairs=order.n_pairs,
        i=order.i,
        j=order.j,
        code=group.code,
        negated=group.negated,
        constant=group.constant,
        distinct=group.distinct,
    )


def compact_absolute(columns: AbsoluteColumns, k: int) -> AbsolutePairs:
    """The absolute pairwise tests in the compact shape: one group per test, one for the
    family's adjustment (``adjusted``)."""
    order = pair_order(columns.i, columns.j, k)
    return AbsolutePairs(
        order=order.order,
        n_pairs=order.n_pairs,
        i=order.i,
        j=order.j,
        wilcoxon=_group(columns.wilcoxon),
        sign_test=_group(columns.sign_test),
        adjusted=_group(columns.fields),
        adjustment=columns.adjustment,
    )


def compact_columns(columns: FamilyColumns, k: int) -> CompactPairs:
    """A family in the compact shape: the absolute pairwise tests (:func:`compact_absolute`)
    or the post-hoc pairs (:func:`compact_posthoc`)."""
    if isinstance(columns, AbsoluteColumns):
        return compact_absolute(columns, k)
    return compact_posthoc(columns, k)


def pair_indices(pairs: PairOrder, k: int) -> tuple[list[int], list[int]]:
    """``(i, j)`` of every pair of a compact family."""
    if pairs.order == "listed" and pairs.i is not None and pairs.j is not None:
        return list(pairs.i), list(pairs.j)
    tri = [(x, y) for x in range(k) for y in range(x + 1, k)]
    return [t[0] for t in tri], [t[1] for t in tri]


def _expand(group: PairGroup) -> dict[str, Column]:
    code, negated = group.code, set(group.negated)
    out: dict[str, Column] = {f: [v] * len(code) for f, v in group.constant.items()}
    for f, col in group.distinct.items():
        if f in negated:
            out[f] = [col[c] if c >= 0 else _negated(col[-1 - c]) for c in code]
        else:
            out[f] = [col[c] if c >= 0 else col[-1 - c] for c in code]
    return out


def expand_pairs(pairs: CompactPairs, k: int) -> FamilyColumns:
    """A compact family back in columns (:class:`AbsoluteColumns` for the absolute pairwise
    tests), the inverse of :func:`compact_columns` (up to the order of the fields: a group's
    constant fields come first)."""
    i, j = pair_indices(pairs, k)
    if isinstance(pairs, AbsolutePairs):
        return AbsoluteColumns(
            i,
            j,
            _expand(pairs.adjusted),
            _expand(pairs.wilcoxon),
            _expand(pairs.sign_test),
            pairs.adjustment,
        )
    return FamilyColumns(i, j, _expand(pairs))


def _json_list(value: JsonValue) -> Column:
    if not isinstance(value, list):
        raise TypeError(f"a stored pairwise column is a list, not {type(value).__name__}")
    return value


def _json_columns(value: JsonValue) -> dict[str, Column]:
    if not isinstance(value, dict):
        raise TypeError(f"a stored pairwise test is an object, not {type(value).__name__}")
    return {f: _json_list(col) for f, col in value.items()}


def int_column(value: JsonValue) -> list[int]:
    """A column of pair indices (``i``, ``j``), checked."""
    column = _json_list(value)
    out = [x for x in column if isinstance(x, int)]
    if len(out) != len(column):
        raise TypeError("a pair index is an integer")
    return out


def _columns_from_json(doc: Mapping[str, JsonValue], absolute: bool) -> FamilyColumns:
    """The columns shape (stored from issue 15's first step to the compact shape)."""
    i, j = int_column(doc["i"]), int_column(doc["j"])
    skip = (*_INDEX, *ABSOLUTE_TESTS, "adjustment") if absolute else _INDEX
    fields = {key: _json_list(v) for key, v in doc.items() if key not in skip}
    if not absolute:
        return FamilyColumns(i, j, fields)
    adjustment = doc["adjustment"]
    if not isinstance(adjustment, str):
        raise TypeError("the absolute pairwise family has an adjustment")
    wilcoxon, sign_test = (_json_columns(doc[t]) for t in ABSOLUTE_TESTS)
    return AbsoluteColumns(i, j, fields, wilcoxon, sign_test, adjustment)


def _columns_from_rows(rows: list[JsonValue], absolute: bool) -> FamilyColumns:
    """One object per pair (stored before issue 15): the same numbers, one list per field,
    as a new computation gives them (so stored answers keep their ids and requests)."""
    objects = [r for r in rows if isinstance(r, dict)]
    if len(objects) != len(rows):
        raise TypeError("a stored pair is an object")

    def column(key: str, rows: list[dict[str, JsonValue]] = objects) -> Column:
        return [r[key] for r in rows]

    i, j = int_column(column("i")), int_column(column("j"))
    if not absolute:
        return FamilyColumns(i, j, {key: column(key) for key in POSTHOC_FIELDS})
    if not objects:
        raise TypeError("a stored absolute pairwise family has pairs (and an adjustment)")
    tests = []
    for test in ABSOLUTE_TESTS:
        results = [r for r in column(test) if isinstance(r, dict)]
        if len(results) != len(objects):
            raise TypeError(f"a stored pair's {test} is an object")
        tests.append({f: column(f, results) for f in results[0]})
    adjustment = objects[0]["adjustment"]
    if not isinstance(adjustment, str):
        raise TypeError("the absolute pairwise family has an adjustment")
    fields = {key: column(key) for key in ADJUSTED}
    return AbsoluteColumns(i, j, fields, tests[0], tests[1], adjustment)


def stored_columns(pairs: JsonValue, *, absolute: bool) -> FamilyColumns | None:
    """A family of a stored answer as columns (:class:`AbsoluteColumns` with ``absolute``);
    ``None`` when it is compact already (or absent). Answers stored before issue 15 have one
    object per pair; those of its first step, one list per field."""
    if isinstance(pairs, list):
        return _columns_from_rows(pairs, absolute)
    if isinstance(pairs, dict) and "order" not in pairs:
        return _columns_from_json(pairs, absolute)
    return None


def stored_absolute_family(pairs: JsonValue, k: int) -> AbsoluteColumns:
    """The absolute pairwise family of a stored answer as columns, whatever its stored shape
    (compact, or one of the shapes before it: :func:`stored_columns`)."""
    columns = stored_columns(pairs, absolute=True)
    if columns is None:
        columns = expand_pairs(AbsolutePairs.model_validate(pairs), k)
    if not isinstance(columns, AbsoluteColumns):
        raise TypeError("the absolute pairwise family is not absolute")
    return columns
