"""The context of ranking on one region of a function: what every ``v1`` curve needs."""

from __future__ import annotations

import functools

import numpy as np

from app.domain import absrank, usersamples
from app.domain.functions import BenchmarkFunction

__all__ = ["rank_context"]


def _region_fraction(fn: BenchmarkFunction, lower: np.ndarray, upper: np.ndarray) -> float:
    """Leb(region ∩ Ω) / Leb(Ω) (float64 bounds: kept per region, asked on every request)."""
    bounds = (fn.lower, fn.upper, lower, upper)
    if all(isinstance(b, np.ndarray) and b.dtype == np.float64 and b.ndim == 1 for b in bounds):
        return _fraction_of(*(b.tobytes() for b in bounds))
    return float(np.prod((upper - lower) / (fn.upper - fn.lower)))


@functools.lru_cache(maxsize=4096)
def _fraction_of(dom_lower: bytes, dom_upper: bytes, lower: bytes, upper: bytes) -> float:
    """:func:`_region_fraction` of float64 bounds given as their bytes (the same arithmetic)."""
    lo, up, d_lo, d_up = (
        np.frombuffer(b, dtype=np.float64) for b in (lower, upper, dom_lower, dom_upper)
    )
    return float(np.prod((up - lo) / (d_up - d_lo)))


def rank_context(
    fn: BenchmarkFunction, lower: np.ndarray, upper: np.ndarray, *, whole_domain: bool
) -> absrank.RankContext:
    """What ranking on the region ``[lower, upper]`` of ``fn`` needs besides the table.

    Parameters
    ----------
    fn : BenchmarkFunction
    lower, upper : ndarray, shape (d,)
        The table's sampling region (the domain, or a box ``[x* − δ, x* + δ] ∩ Ω``).
    whole_domain : bool
        Whether the region is the whole domain (a box's maximum is not the domain's ``f_max``:
        the flat upper tail is used there).
    """
    return absrank.RankContext(
        f_opt=fn.f_opt,
        f_max=fn.f_max if whole_domain else None,
        # the registered plateau mass is the domain's; a box's share of the plateau is unknown,
        # so a box table counts its samples at f* instead (Eq. 28 at t = f*)
        atom=fn.local.atom if whole_domain else 0.0,
        beta=fn.local.beta,
        beta_derivation=fn.local.derivation,
        x_opt=fn.x_opt,
        region_lower=lower,
        region_upper=upper,
        domain_volume_fraction=_region_fraction(fn, lower, upper),
        # a user's samples come without their points: no clipping check for the power tail
        points_known=usersamples.USER_FLAG not in fn.flags,
        # no plateau at f*: v1(f*) = 0 even where stored samples round to f*
        no_plateau=fn.f_opt is not None and fn.local.atom == 0.0,
    )
