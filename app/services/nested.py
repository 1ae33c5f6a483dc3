"""Transitional re-export of the ladder services' old path (not :mod:`app.domain.nested`).

The loaded-tables-to-levels converter is :mod:`app.services.ladder_levels`; the database-facing
use case (:func:`ladder_curve`, :class:`LadderCurve`) is :mod:`app.services.ladders`. Kept for
callers outside those modules' owners (``bench/tail_quality.py``, docs); new code imports the
new modules.
"""

from __future__ import annotations

from app.services.ladder_levels import (
    Ladder,
    LevelRegion,
    ladder_levels,
    nested_curve_for,
)
from app.services.ladders import LadderCurve, ladder_curve

__all__ = [
    "Ladder",
    "LadderCurve",
    "LevelRegion",
    "ladder_curve",
    "ladder_levels",
    "nested_curve_for",
]
