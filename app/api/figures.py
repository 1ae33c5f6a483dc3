"""Query options shared by every figure route: ``dpi`` (PNG), ``width``, ``height``, ``font_size``.

Each route takes one :class:`app.services.plots.FigureOptions` through :data:`VectorOptions`
(SVG, PDF) or :data:`RasterOptions` (PNG: ``dpi`` as well); FastAPI validates the bounds, so a
bad value is a 422 problem naming the query field, as everywhere in the API.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Query

from app.schemas.common import ProblemExample, invalid
from app.services import plots

DpiQuery = Annotated[
    int,
    Query(
        ge=plots.MIN_DPI,
        le=plots.MAX_DPI,
        description="dots per inch of the PNG",
        examples=[plots.DEFAULT_DPI],
    ),
]
WidthQuery = Annotated[
    float | None,
    Query(
        ge=plots.MIN_INCHES,
        le=plots.MAX_INCHES,
        description="figure width in inches (default: the figure's own; the file is then "
        "trimmed to the drawn content)",
        examples=[3.5],
    ),
]
HeightQuery = Annotated[
    float | None,
    Query(
        ge=plots.MIN_INCHES,
        le=plots.MAX_INCHES,
        description="figure height in inches (default: the figure's own)",
        examples=[2.5],
    ),
]
FontSizeQuery = Annotated[
    float,
    Query(
        ge=plots.MIN_FONT_SIZE,
        le=plots.MAX_FONT_SIZE,
        description="base font size in points (titles and legends keep their proportion)",
        examples=[plots.DEFAULT_FONT_SIZE],
    ),
]


def vector_options(
    width: WidthQuery = None,
    height: HeightQuery = None,
    font_size: FontSizeQuery = plots.DEFAULT_FONT_SIZE,
) -> plots.FigureOptions:
    """The options of an SVG or PDF figure."""
    return plots.FigureOptions(width=width, height=height, font_size=font_size)


def raster_options(
    dpi: DpiQuery = plots.DEFAULT_DPI,
    width: WidthQuery = None,
    height: HeightQuery = None,
    font_size: FontSizeQuery = plots.DEFAULT_FONT_SIZE,
) -> plots.FigureOptions:
    """The options of a PNG figure."""
    return plots.FigureOptions(dpi=dpi, width=width, height=height, font_size=font_size)


VectorOptions = Annotated[plots.FigureOptions, Depends(vector_options)]
RasterOptions = Annotated[plots.FigureOptions, Depends(raster_options)]

#: The documented 422 of an SVG or PDF figure (a size out of bounds) and of a PNG (its dpi).
BAD_SIZE: ProblemExample = invalid(
    "width",
    f"Input should be less than or equal to {plots.MAX_INCHES}",
    "less_than_equal",
    description="An option out of bounds (width, height, font_size)",
)
BAD_DPI: ProblemExample = invalid(
    "dpi",
    f"Input should be less than or equal to {plots.MAX_DPI}",
    "less_than_equal",
    description="An option out of bounds (dpi, width, height, font_size)",
)

FIGURE_DOC = (
    " SVG keeps text as text (editable), PDF embeds its fonts, PNG is drawn at `dpi` (default"
    f" {plots.DEFAULT_DPI}). Fonts fall back per glyph from DejaVu Sans (Latin, Greek) to Noto"
    " Sans CJK."
)
GLYPH_DOC = (
    " The characters no installed font draws (e.g. CJK names on a server without"
    " fonts-noto-cjk: drawn as empty boxes) are listed as U+XXXX code points in the"
    f" `{plots.MISSING_GLYPHS_HEADER}` header, absent when every glyph is drawn."
)
OPTIONS_ETAG_DOC = (
    ' Options other than their defaults add "-w<width>", "-h<height>", "-f<font_size>" to the ETag.'
)
GLYPH_HEADERS: dict[str, Any] = {
    plots.MISSING_GLYPHS_HEADER: {
        "description": "code points (U+XXXX, space-separated) no installed font draws; "
        "absent when every character has a glyph",
        "schema": {"type": "string"},
    }
}
