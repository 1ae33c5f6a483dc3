"""Step functions given by their exact breakpoints: the shape every profile and ECDF returns.

A profile or an empirical distribution function is a step function of counts over a fixed
total. It is stored exactly: the breakpoints ``x`` (strictly increasing) and the integer count
on every interval between them, so a client can draw it (``matplotlib.pyplot.step``), list it,
or evaluate it without rounding. Which side of a breakpoint holds the new level is explicit:

- ``"right"`` (right-continuous, the ECDFs, performance and data profiles, non-decreasing):
  ``F(t) = counts[i] / total`` for ``x[i-1] <= t < x[i]``, ``counts[0]`` below ``x[0]``;
- ``"left"`` (left-continuous, the accuracy profile ``#{γ >= τ}``, non-increasing):
  ``F(t) = counts[i] / total`` for ``x[i-1] < t <= x[i]``, ``counts[0]`` at and below ``x[0]``.

Cost: building is ``O(n log n)`` for ``n`` values (one sort); evaluating ``m`` points is
``O(m log k)`` for ``k`` breakpoints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["Continuity", "StepFunction", "frozen", "lower_step", "upper_step"]

Continuity = Literal["right", "left"]
"""Which side of a breakpoint holds the level that starts (or ends) there."""


def frozen(values: ArrayLike, dtype: type | None = None) -> NDArray[Any]:
    """Return a read-only copy (results are frozen dataclasses; their arrays are frozen too)."""
    array = np.array(values, dtype=dtype)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class StepFunction:
    """A step function ``F(t) = counts[i] / total`` with exact breakpoints.

    Attributes
    ----------
    x : ndarray of float, shape (k,)
        Strictly increasing breakpoints (finite).
    counts : ndarray of int, shape (k + 1,)
        ``counts[0]`` holds before the first breakpoint, ``counts[i]`` between ``x[i-1]`` and
        ``x[i]``, ``counts[k]`` after the last one; which end of an interval is closed is
        :attr:`continuity`.
    total : int
        The denominator (problems, or (target, run) pairs); ``>= 1``.
    continuity : {"right", "left"}
        ``"right"``: ``F(x[i]) = counts[i + 1] / total``;
        ``"left"``: ``F(x[i]) = counts[i] / total``.
    """

    x: NDArray[np.float64]
    counts: NDArray[np.int64]
    total: int
    continuity: Continuity

    @property
    def y(self) -> NDArray[np.float64]:
        """The levels ``counts / total``, shape (k + 1,)."""
        return self.counts / self.total

    def count(self, t: ArrayLike) -> NDArray[np.int64]:
        """The exact count (numerator) at ``t`` (any shape): a binary search per point."""
        side: Literal["right", "left"] = "right" if self.continuity == "right" else "left"
        index = np.searchsorted(self.x, np.asarray(t, dtype=float), side=side)
        return np.asarray(self.counts[index])

    def __call__(self, t: ArrayLike) -> NDArray[np.float64]:
        """Evaluate ``F(t) = count(t) / total`` at ``t`` (any shape)."""
        return np.asarray(self.count(t) / self.total, dtype=float)


def upper_step(values: NDArray[np.float64], total: int) -> StepFunction:
    """``F(t) = #{v <= t} / total``, right-continuous; non-finite values never count.

    Parameters
    ----------
    values : ndarray of float, any shape
        The sample (``inf`` or ``nan`` for "never": failures, targets not reached).
    total : int
        Denominator, ``>= values.size`` is allowed (values not given count as failures).
    """
    finite = np.sort(values[np.isfinite(values)], axis=None)
    x, first = np.unique(finite, return_index=True)
    # counts[i + 1] = #{v <= x[i]} = index of the first value above x[i]
    above = np.append(first[1:], finite.size)
    return StepFunction(
        x=frozen(x, float),
        counts=frozen(np.concatenate(([0], above)), np.int64),
        total=int(total),
        continuity="right",
    )


def lower_step(values: NDArray[np.float64], total: int) -> StepFunction:
    """``F(t) = #{v >= t} / total``, left-continuous; ``-inf`` and ``nan`` never count.

    Parameters
    ----------
    values : ndarray of float, any shape
        The sample; ``+inf`` is not allowed (cap it first), ``-inf`` or ``nan`` means "never".
    total : int
        Denominator.
    """
    finite = np.sort(values[np.isfinite(values)], axis=None)
    x, first = np.unique(finite, return_index=True)
    # counts[i] = #{v >= x[i]} = size - (index of the first value equal to x[i])
    return StepFunction(
        x=frozen(x, float),
        counts=frozen(np.append(finite.size - first, 0), np.int64),
        total=int(total),
        continuity="left",
    )
