"""The comparison's fast paths against today's implementation (tests/unit/services/
_reference_niia.py): the NIIA report (pairs alone vectorized, the full set's analyses reused)
and the batched paired tests, on random matrices, across post-hoc procedures, controls, tie
tolerances, zero methods and both the relative and the absolute side."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from app.config import Settings
from app.domain import paired
from app.schemas.comparisons import ComparisonCreate
from app.services import comparisons
from app.services._comparison_absolute import (
    AbsoluteTested,
    absolute_niia,
    pairwise_absolute,
)
from app.services._comparison_pairs import all_pair_tests
from tests.unit.services._reference_niia import (
    reference_absolute_analyse,
    reference_niia_side,
    reference_pairwise_absolute,
    reference_relative_analyse,
)

SETTINGS = Settings(database_url="sqlite://", wilcoxon_exact_max_n=20)
ALL_PAIRS = ("nemenyi", "shaffer", "holm", "hochberg", "hommel", "finner")
VS_CONTROL = ("holm", "hochberg", "hommel", "finner", "bonferroni-dunn", "li")


@st.composite
def matrices(draw: Any, min_k: int = 2, max_k: int = 7) -> np.ndarray:
    n = draw(st.integers(1, 25))
    k = draw(st.integers(min_k, max_k))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["continuous", "rounded", "tiny", "atoms"]))
    if kind == "continuous":
        return rng.random((n, k))
    if kind == "rounded":  # many ties
        return np.round(rng.random((n, k)), 1)
    if kind == "tiny":  # subnormal and far-apart magnitudes: the exact differences matter
        return np.asarray(10.0 ** rng.uniform(-323, 0, (n, k)))
    return rng.choice(np.array([0.0, 5e-324, 1e-300, 0.5, 1.0 - 2**-53, 1.0]), size=(n, k))


@st.composite
def requests(draw: Any, k: int) -> tuple[ComparisonCreate, int | None]:
    use_control = draw(st.booleans())
    if use_control:
        method = draw(st.sampled_from(VS_CONTROL))
        control: int | None = draw(st.integers(0, k - 1))
    else:
        method = draw(st.sampled_from(ALL_PAIRS))
        control = None
    convention: Literal["standard", "jing-liu"] = "standard"
    if method in ("nemenyi", "bonferroni-dunn") and draw(st.booleans()):
        convention = "jing-liu"
    body = ComparisonCreate(
        csv="algorithm,problem,run,value\n",
        posthoc=method,
        control=None if control is None else f"A{control}",
        alpha=draw(st.sampled_from([0.05, 0.1, 0.01, 0.3])),
        rtol=draw(st.sampled_from([0.0, 0.0, 1e-3])),
        zero_method=draw(st.sampled_from(["pratt", "wilcox", "zsplit"])),
        cd_convention=convention,
    )
    return body, control


def _subsets(draw: Any, k: int) -> list[list[int]]:
    default = [[i, j] for i in range(k) for j in range(i + 1, k)]
    extra = draw(st.lists(st.lists(st.integers(0, k - 1), min_size=2, max_size=k), max_size=4))
    return default + [s for s in extra if len(set(s)) >= 2]


@given(st.data())
def test_niia_report_equals_the_reference(data: st.DataObject) -> None:
    matrix = data.draw(matrices())
    k = matrix.shape[1]
    body, control = data.draw(requests(k))
    subsets = _subsets(data.draw, k)
    names = tuple(f"A{i}" for i in range(k))
    post = comparisons._posthoc(matrix, body, control)
    new = comparisons._niia_side(
        subsets, comparisons._relative_niia(matrix, body, control, post), names
    )
    old = reference_niia_side(matrix, subsets, reference_relative_analyse(body, control), names)
    assert new == old
    v = matrix  # any matrix of values in [0, 1] is a matrix of absolute ranks
    _, sig, tests = pairwise_absolute(v, body, control, SETTINGS)
    tested = AbsoluteTested(v, sig, tests)
    new = comparisons._niia_side(subsets, absolute_niia(tested, body, control, SETTINGS), names)
    old = reference_niia_side(
        v, subsets, reference_absolute_analyse(body, control, SETTINGS), names
    )
    assert new == old


@given(st.data())
def test_pairwise_absolute_equals_the_reference(data: st.DataObject) -> None:
    from app.services.comparison_pairs import stored_columns
    from app.services.serialize import jsonable

    v = data.draw(matrices())
    k = v.shape[1]
    body, control = data.draw(requests(k))
    names = tuple(f"A{i}" for i in range(k))
    new, new_sig, _ = pairwise_absolute(v, body, control, SETTINGS, names)
    old, old_sig = reference_pairwise_absolute(v, body, control, SETTINGS, names)
    assert (new_sig == old_sig).all()
    as_columns = stored_columns(jsonable(old), absolute=True)
    assert new is not None
    assert as_columns is not None
    assert json_bytes(new.json(names)) == json_bytes(as_columns.json(names))
    reference = reference_pairs_as_columns(jsonable(old))  # its keys in another order
    assert json_bytes(new.json(names), sort_keys=True) == json_bytes(reference, sort_keys=True)


@given(matrices(max_k=6), st.sampled_from(["pratt", "wilcox", "zsplit"]), st.integers(0, 30))
def test_batched_paired_tests_equal_one_call_per_pair(
    v: np.ndarray, zero_method: str, exact_max_n: int
) -> None:
    k = v.shape[1]
    pairs = [(i, j) for i in range(k) for j in range(k) if i != j]
    for t in all_pair_tests(v, pairs, zero_method=zero_method, exact_max_n=exact_max_n):
        assert t.wilcoxon == paired.wilcoxon_signed_rank(
            v[:, t.i], v[:, t.j], zero_method=zero_method, exact_max_n=exact_max_n
        )
        assert t.sign_test == paired.sign_test(v[:, t.i], v[:, t.j])


def test_infinite_values_take_the_one_call_per_pair_path() -> None:
    v = np.array([[0.0, np.inf, 1.0], [np.inf, np.inf, -np.inf], [1.0, 2.0, 3.0]])
    pairs = [(0, 1), (0, 2), (1, 2)]
    for t in all_pair_tests(v, pairs, zero_method="pratt", exact_max_n=10):
        assert t.wilcoxon == paired.wilcoxon_signed_rank(v[:, t.i], v[:, t.j], exact_max_n=10)
        assert t.sign_test == paired.sign_test(v[:, t.i], v[:, t.j])


@given(st.data())
def test_stored_pairs_read_as_the_columns_a_new_computation_gives(data: st.DataObject) -> None:
    """A comparison stored with one object per pair is read in today's columns, equal."""
    from app.services.comparison_pairs import stored_columns
    from app.services.serialize import jsonable
    from app.services.stattests import named_posthoc

    v = data.draw(matrices())
    k = v.shape[1]
    body, control = data.draw(requests(k))
    names = tuple(f"A{i}" for i in range(k))
    post = comparisons._posthoc(v, body, control)
    old_rows, _ = reference_pairwise_absolute(v, body, control, SETTINGS, names)
    stored = jsonable(
        {
            "relative": {"posthoc": named_posthoc(post, names)},
            "absolute": {"pairwise": old_rows},
        }
    )
    columns, _, _ = pairwise_absolute(v, body, control, SETTINGS, names)
    posthoc = comparisons._posthoc_answer(post, names)["pairs"]
    assert columns is not None
    for new, family, absolute in (
        (posthoc, stored["relative"]["posthoc"]["pairs"], False),
        (columns, stored["absolute"]["pairwise"], True),
    ):
        read = stored_columns(family, absolute=absolute)
        assert read == new
        assert read is not None
        assert json_bytes(read.json(names)) == json_bytes(new.json(names))


def reference_pairs_as_columns(rows: Any) -> Any:
    """The absolute pairwise rows as columns, by the dict-based oracle."""
    from tests.unit.services._reference_compact import pairs_as_columns

    return pairs_as_columns({"absolute": {"pairwise": rows}})["absolute"]["pairwise"]


def json_bytes(doc: Any, *, sort_keys: bool = False) -> bytes:
    import json

    return json.dumps(doc, allow_nan=False, sort_keys=sort_keys).encode()
