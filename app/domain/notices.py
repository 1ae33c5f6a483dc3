"""Warnings and refusals of the numerical core, as types: callers read fields, never text.

Use them qualified (``from app.domain import notices``; ``notices.Warning(...)``): the class
name follows the issue's wording and shadows the builtin only where imported bare.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

JSONScalar = str | int | float | bool | None
"""A value a warning's ``data`` may hold (lists of them as tuples)."""
JSONValue = JSONScalar | tuple[JSONScalar, ...]


@dataclass(frozen=True)
class Warning:  # the name; import the module, not the class
    """Something a caller should know about an answer that is still given.

    Attributes
    ----------
    code : str
        Stable kebab-case identity (``"linear-tail"``, ``"beyond-samples"``, ...): what
        services group, count and translate by.
    message : str
        The sentence a person reads, for this request.
    data : Mapping of str to JSONValue
        The numbers and names the message was made from (``{"index": 3}`` for the value at
        ``values[3]``), so a service can say it differently without parsing ``message``.
    field : str or None
        The request field it concerns, if any (``"values"``, ``"tail"``).
    """

    code: str
    message: str
    data: Mapping[str, JSONValue] = field(default_factory=dict)
    field: str | None = None

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Refusal:
    """Why a method does not apply here: returned (not raised) where a caller tries the next one.

    Attributes
    ----------
    code : str
        Stable kebab-case identity (``"anchor-too-shallow"``, ``"lease-held"``, ...).
    message : str
        The reason for a person.
    field : str or None
        The request field at fault, if any.
    """

    code: str
    message: str
    field: str | None = None

    def __str__(self) -> str:
        return self.message
