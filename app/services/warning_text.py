"""Rank warnings' texts with the ranked values' positions replaced by names.

``POST /v1/absolute-ranks`` words a warning about one value as ``values[i]``; a comparison
ranks one problem's cells per runs count and a leaderboard ranks the result sets of one
function, so both rename ``values[i]`` as the algorithm or the set at position ``i``. This is
the one place that rewrites the text: once rank warnings carry their index as data
(:class:`app.domain.notices.Warning`, ``data={"index": i}``), :func:`name_values` can build
the text from ``data`` instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable

VALUES_INDEX = re.compile(r"values\[(\d+)\]")
"""How a rank warning names the value at position ``i`` of its request: ``values[i]``."""


def name_values(message: str, name: Callable[[int], str]) -> str:
    """``message`` with every ``values[i]`` replaced by ``name(i)``."""
    return VALUES_INDEX.sub(lambda m: name(int(m.group(1))), message)
