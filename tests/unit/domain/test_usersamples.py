"""A user's samples: parsing, canonical hash, the exact Eq. 28 table (Fig. 9)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from app.domain import absrank, usersamples
from app.domain.errors import InvalidInput


def test_fig9_table_counts_every_sample() -> None:
    ys = usersamples.sorted_samples([6.0, 1.0, 4.0, 3.0], at_most=10)
    table = usersamples.sample_table(ys, k_exact=2, n_knots=2)  # fewer knots than samples
    # v at each knot is count/(N+1) exactly; the bound covers the skipped samples
    for value, count in zip(table.values.tolist(), table.counts.tolist(), strict=True):
        assert Fraction(count, 5) == Fraction(sorted([1, 3, 4, 6]).index(value) + 1, 5)
    exact = usersamples.sample_table(ys, k_exact=4, n_knots=4)
    assert exact.max_interp_error == 0.0
    assert exact.low_x.shape == (4, 0)
    assert absrank.decode_table_data(absrank.encode_table_data(exact)).low_x.shape == (4, 0)


def test_the_hash_is_that_of_the_multiset() -> None:
    a = usersamples.sorted_samples([0.0, 2.0, -1.0], at_most=3)
    b = usersamples.sorted_samples([2.0, -1.0, -0.0], at_most=3)
    assert usersamples.samples_sha256(a) == usersamples.samples_sha256(b)
    c = usersamples.sorted_samples([2.0, -1.0, 1e-300], at_most=3)
    assert usersamples.samples_sha256(a) != usersamples.samples_sha256(c)


@pytest.mark.parametrize(
    ("values", "field"),
    [([1.0], "samples"), ([1.0, 2.0, 3.0, 4.0], "samples"), ([1.0, np.inf], "samples.1")],
)
def test_refusals_name_the_entry(values: list[float], field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        usersamples.sorted_samples(values, at_most=3)
    assert err.value.field == field


def test_files_one_per_line_or_a_column() -> None:
    text = b"\xef\xbb\xbf# comment\n1.5\n\n-2\n"
    assert usersamples.parse_sample_file(text, filename="a", column=None, at_most=5) == [1.5, -2.0]
    csv = b"x,f\n0,3\n1,1e-3\n"
    assert usersamples.parse_sample_file(csv, filename="a", column="f", at_most=5) == [3.0, 1e-3]
    with pytest.raises(InvalidInput, match=r"^a line 2: 'inf' is not finite"):
        usersamples.parse_sample_file(b"1\ninf\n", filename="a", column=None, at_most=5)
    with pytest.raises(InvalidInput, match="not UTF-8"):
        usersamples.parse_sample_file(b"\xff\n", filename="a", column=None, at_most=5)
    with pytest.raises(InvalidInput, match="no header line"):
        usersamples.parse_sample_file(b"# only\n", filename="a", column="f", at_most=5)


def test_auto_keeps_eq28_on_a_tiny_sample_with_a_stated_f_opt() -> None:
    """Jing & Liu Fig. 9 (Y = [1, 3, 4, 6]) with f* = 0 stated: ``auto`` must not anchor a power
    tail on the 4 samples (it would replace Eq. 28 below y_4); Eq. 28 holds at and between the
    samples, the linear tail from (f*, 0) below y_1."""
    values = np.array([1.0, 3.0, 4.0, 6.0])
    data = absrank.build_table_data(values, np.zeros((4, 1)), k_exact=4)
    ctx = absrank.RankContext(0.0, None, 0.0, None, "", None, np.zeros(1), np.ones(1))
    res = absrank.ranks_from_curve(
        np.array([0.5, 1.0, 2.0, 5.0]), absrank.table_curve(data, ctx, tail="auto")
    )
    exact = [Fraction(1, 10), Fraction(1, 5), Fraction(3, 10), Fraction(7, 10)]
    assert res.v.tolist() == pytest.approx([float(x) for x in exact], rel=1e-12)
    assert res.method.tolist() == ["tail-linear", "interpolated", "interpolated", "interpolated"]
    assert any("power tail not tried" in str(w) for w in absrank.table_curve(data, ctx).warnings)


@pytest.mark.parametrize(
    ("csv", "twice"),
    [(b"x,f,f\n0,3,4\n1,1,2\n", "'f'"), (b"# c\nf, x ,x\n3,0,1\n", "'x'")],
)
def test_a_header_naming_a_column_twice_is_refused(csv: bytes, twice: str) -> None:
    # which "f" is meant would be a guess (the first? the last?): refused, naming the line
    line = 2 if csv.startswith(b"#") else 1
    with pytest.raises(
        InvalidInput, match=rf"^a line {line}: the header names column\(s\) {twice}"
    ):
        usersamples.parse_sample_file(csv, filename="a", column="f", at_most=5)


def test_samples_whose_range_overflows_are_refused() -> None:
    """Eq. 28 interpolates over ``y_{i+1} − y_i``: a range beyond the largest float64 would rank
    silently wrong (the fresh-user pass: [1e308, −1e308] gave v(0) = 1/3, not 1/2)."""
    with pytest.raises(InvalidInput) as exc:
        usersamples.sorted_samples([1e308, -1e308], at_most=10)
    assert exc.value.field == "samples"
    assert "power of two" in str(exc.value)
    # the ends as plain numbers (not numpy's repr: np.float64(-1e+308))
    assert "span -1e+308 to 1e+308," in str(exc.value)
    assert usersamples.sorted_samples([1e307, -1e307], at_most=10).tolist() == [-1e307, 1e307]
