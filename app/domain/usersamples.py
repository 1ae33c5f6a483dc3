"""Tables of a user's own function, from the values ``f(U_i)`` the user sampled (SPEC §3.2).

A researcher whose problem absrank does not host sends ``N`` values of ``f`` at points drawn
uniformly from the problem's domain. Nothing is evaluated here: the values are sorted and
stored as a :class:`app.domain.absrank.TableData` that reproduces Jing & Liu's Eq. 28
exactly at every distinct sample (``v1(y_(i)) = #{y_j <= y_(i)}/(N+1)``, linear in between).
The table keeps no points (``low_x`` has zero columns): the power tail's clipping check is not
possible (:attr:`app.domain.absrank.RankContext.points_known`).

How the values were sampled is the user's statement; it cannot be verified from the values.

References
----------
.. [1] Y. Jing, Q. Liu. Absolute Ranking: An Essential Normalization for Benchmarking
       Optimization Algorithms. Eq. 28 and Fig. 9.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math

import numpy as np

from app.domain.absrank import TableData, build_table_data
from app.domain.errors import InvalidInput

__all__ = ["USER_FLAG", "parse_sample_file", "sample_table", "samples_sha256", "sorted_samples"]

USER_FLAG = "user-samples"
"""The flag of the stand-in function of a user table (no formula, values only)."""
MIN_SAMPLES = 2


def sorted_samples(samples: object, *, field: str = "samples", at_most: int) -> np.ndarray:
    """The samples as a sorted float64 array, each finite; ``2 <= N <= at_most``.

    Parameters
    ----------
    samples : array_like, shape (N,)
        Values of ``f`` at uniform points of its domain (units of ``f``), any order.
    field : str, default "samples"
        The request field that carried them (errors name ``field.i`` for entry ``i``).
    at_most : int
        The deployment's limit on ``N``.

    Raises
    ------
    InvalidInput
        Fewer than 2 or more than ``at_most`` values, or a NaN/infinite one (named by index).
    """
    y = np.asarray(samples, dtype=np.float64)
    if y.ndim != 1:
        raise InvalidInput(f"{field} must be a list of numbers", field=field)
    if not MIN_SAMPLES <= y.size <= at_most:
        raise InvalidInput(
            f"{field} must hold {MIN_SAMPLES} to {at_most} values, got {y.size}", field=field
        )
    bad = np.flatnonzero(~np.isfinite(y))
    if bad.size:
        i = int(bad[0])
        raise InvalidInput(
            f"{field}.{i} is {y[i]}: every sample must be a finite number", field=f"{field}.{i}"
        )
    y = np.sort(y, kind="stable")
    with np.errstate(over="ignore"):
        span = y[-1] - y[0]
    if not math.isfinite(span):  # Eq. 28 interpolates over differences of samples
        raise InvalidInput(
            f"{field} span {float(y[0])!r} to {float(y[-1])!r}, a range wider than the largest "
            "float64: divide the values by a power of two (ranks do not change)",
            field=field,
        )
    return y


def samples_sha256(ys: np.ndarray) -> str:
    """SHA-256 of the sorted samples as little-endian float64: the same multiset, the same hash.

    ``-0.0`` and ``0.0`` are the same value of ``f`` and hash alike.
    """
    canonical = np.ascontiguousarray(ys + 0.0, dtype="<f8")  # -0.0 + 0.0 == +0.0
    return hashlib.sha256(canonical.tobytes()).hexdigest()


def sample_table(ys: np.ndarray, *, k_exact: int, n_knots: int) -> TableData:
    """The stored table of sorted samples (Eq. 28 within ``max_interp_error``).

    Parameters
    ----------
    ys : ndarray, shape (N,)
        Sorted finite samples (:func:`sorted_samples`).
    k_exact, n_knots : int
        As in :func:`app.domain.absrank.build_table_data`; ``k_exact >= N`` and
        ``n_knots >= N`` store every distinct sample (``max_interp_error = 0``).

    Returns
    -------
    TableData
        With ``low_x`` of shape ``(min(k_exact, N), 0)``: no points are known.

    Examples
    --------
    >>> t = sample_table(np.array([1.0, 3.0, 4.0, 6.0]), k_exact=8, n_knots=8)
    >>> t.values.tolist(), t.counts.tolist(), t.max_interp_error
    ([1.0, 3.0, 4.0, 6.0], [1, 2, 3, 4], 0.0)
    """
    k = min(int(k_exact), ys.size)
    return build_table_data(ys + 0.0, np.empty((k, 0)), k_exact=k_exact, n_knots=n_knots)


def parse_sample_file(
    data: bytes, *, filename: str, column: str | None, at_most: int
) -> list[float]:
    """The values of an uploaded sample file: one per line, or one column of a CSV.

    Blank lines and lines starting with ``#`` are skipped. With ``column``, the first other
    line is a CSV header naming the column to read; without it, every line holds one number.

    Parameters
    ----------
    data : bytes
        UTF-8 text.
    filename : str
        Named in errors.
    column : str, optional
        The CSV column holding the values.
    at_most : int
        Most values read (one more is an error).

    Raises
    ------
    InvalidInput
        Not UTF-8, a missing column or a header naming a column twice, a line that is no finite
        number, too many values
        (``field="file"``; the message names the file and the 1-based line).
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{filename}: not UTF-8 text ({exc.reason})", field="file") from None
    rows = csv.reader(io.StringIO(text))
    index: int | None = None
    out: list[float] = []
    for row in rows:
        line = rows.line_num
        if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
            continue
        if column is not None and index is None:
            index = _column_index(row, column, filename, line)
            continue
        out.append(_cell(row, 0 if index is None else index, filename, line))
        if len(out) > at_most:
            raise InvalidInput(
                f"{filename} line {line}: more than {at_most} values (the max_user_samples "
                "setting)",
                field="file",
            )
    if column is not None and index is None:
        raise InvalidInput(f"{filename}: no header line naming column {column!r}", field="file")
    return out


def _column_index(header: list[str], column: str, filename: str, line: int) -> int:
    names = [h.strip() for h in header]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:  # which column is meant would be a guess
        raise InvalidInput(
            f"{filename} line {line}: the header names column(s) "
            f"{', '.join(repr(n[:40]) for n in twice[:20])} more than once",
            field="file",
        )
    if column not in names:
        raise InvalidInput(
            f"{filename} line {line}: the header has no column {column!r} (columns: "
            f"{', '.join(repr(n) for n in names[:20])})",
            field="file",
        )
    return names.index(column)


def _cell(row: list[str], index: int, filename: str, line: int) -> float:
    if index == 0 and len(row) != 1:
        raise InvalidInput(
            f"{filename} line {line}: {len(row)} fields; send one value per line, or name the "
            "CSV column to read (column=...)",
            field="file",
        )
    if index >= len(row):
        raise InvalidInput(f"{filename} line {line}: no field {index + 1}", field="file")
    raw = row[index].strip()
    try:
        value = float(raw)
    except ValueError:
        raise InvalidInput(
            f"{filename} line {line}: {raw[:40]!r} is not a number", field="file"
        ) from None
    if not math.isfinite(value):
        raise InvalidInput(
            f"{filename} line {line}: {raw[:40]!r} is not finite: every sample must be a finite "
            "number",
            field="file",
        )
    return value
