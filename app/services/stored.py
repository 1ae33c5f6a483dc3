"""What the use cases that store a resource return: its answer, and whether this call made it."""

from __future__ import annotations

from typing import Any, NamedTuple


class Stored(NamedTuple):
    """A stored resource's answer and whether this request created it.

    Attributes
    ----------
    answer : dict of str to JSON
        The body of the resource's declared response model (validated by the API).
    created : bool
        True when this request stored it (``201``), False when an identical request had
        (``200``, identical bytes).
    """

    answer: dict[str, Any]
    created: bool
