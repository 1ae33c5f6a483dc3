"""Rows of a long-format CSV: the header, line numbers and limits every CSV reader shares.

:func:`read_rows` checks the header (columns in any order, case and spaces ignored, a BOM
dropped), skips blank lines (and ``#`` comment lines when asked), counts rows against a limit
while it reads, and reports every fault with its 1-based line number through ``fail``, so that
each caller raises its own error type (a comparison's ``csv`` field, an upload's file and line).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator, Sequence

__all__ = ["Fail", "parse_count", "read_rows"]

Fail = Callable[[str, int | None], Exception]
"""``fail(message, line)``: the exception to raise for a fault (``line`` is 1-based or None)."""


def read_rows(
    text: str,
    columns: Sequence[str],
    *,
    optional: Sequence[str] = (),
    max_rows: int,
    fail: Fail,
    comments: bool = False,
    overflow: Fail | None = None,
) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line, fields)`` per data row, ``fields`` in ``columns + optional present`` order.

    Parameters
    ----------
    text : str
        The whole CSV.
    columns : sequence of str
        Required header names (lower case).
    optional : sequence of str
        Header names that may be present; those present follow ``columns`` in ``fields``.
    max_rows : int
        More data rows than this is a fault, raised on reading row ``max_rows + 1`` (nothing
        beyond it is parsed).
    fail : callable
        Builds the exception of a fault from its message and line.
    comments : bool
        Skip lines whose first character is ``#`` (before and after the header).
    overflow : callable, optional
        Builds the exception of too many rows (default ``fail``).

    Raises
    ------
    Exception
        What ``fail`` returns: an empty text, a header that does not name exactly the columns
        (plus any of ``optional``), a row with another number of fields, a CSV syntax error,
        too many rows, no row.
    """
    lines: Iterator[str] = io.StringIO(text.removeprefix("\ufeff"))  # spreadsheets write a BOM
    if comments:
        lines = _uncommented(lines)
    reader = csv.reader(lines)
    try:
        written = next(reader)
        while not written or all(not f.strip() for f in written):
            written = next(reader)
    except StopIteration:
        raise fail("is empty; expected a header line", None) from None
    except csv.Error as exc:
        raise fail(str(exc), 1) from None
    header = [h.strip().lower() for h in written]
    present = [c for c in optional if c in header]
    wanted = [*columns, *present]
    if sorted(header) != sorted(wanted):
        extra = f" (optional: {', '.join(optional)})" if optional else ""
        raise fail(
            f"header must name the columns {', '.join(columns)}{extra} "
            f"(got {', '.join(h.strip() for h in written)[:200]})",
            None,
        )
    pos = [header.index(c) for c in wanted]
    n_rows = 0
    try:
        for fields in reader:
            line = reader.line_num
            if not fields or all(not f.strip() for f in fields):
                continue
            if len(fields) != len(wanted):
                raise fail(f"expected {len(wanted)} fields, got {len(fields)}", line)
            if n_rows >= max_rows:
                raise (overflow or fail)(f"more than {max_rows} rows", line)
            n_rows += 1
            yield line, [fields[i] for i in pos]
    except csv.Error as exc:
        raise fail(str(exc), reader.line_num) from None
    if not n_rows:
        raise fail("has a header but no rows", None)


def _uncommented(lines: Iterator[str]) -> Iterator[str]:
    """The lines, with each ``#`` line replaced by an empty one (line numbers stay true)."""
    for line in lines:
        yield "\n" if line.startswith("#") else line


def parse_count(token: str, *, low: int = 0, high: int = 10**9) -> int | None:
    """The integer a CSV cell spells in ``[low, high]`` (digits only), else ``None``."""
    token = token.strip()
    if not token.isdigit() or len(token) > len(str(high)):
        return None
    value = int(token)
    return value if low <= value <= high else None
