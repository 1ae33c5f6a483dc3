"""Figures: one output path (SVG text as text, PDF fonts embedded, PNG dpi), options, CJK fonts.

The CD diagram of a comparison whose algorithms are named "粒子群", "Θ-ES" and "CMA-ES" is the
example of issue 16 (the CJK name rendered as empty boxes when glyphs were paths of DejaVu Sans).
"""

from __future__ import annotations

import hashlib
import io
import re
import warnings
from typing import Any

import pytest
from fastapi.testclient import TestClient
from PIL import Image

from app.services import plots
from app.services.cd_diagram import cd_diagram_svg

NAMES = ("粒子群", "Θ-ES", "CMA-ES")


def _comparison(client: TestClient, names: tuple[str, ...] = NAMES) -> str:
    rows = [
        {"algorithm": a, "problem": f"p{j}", "run": 0, "value": float(i + 1 + (j % 2) * 0.1 * i)}
        for j in range(8)
        for i, a in enumerate(names)
    ]
    r = client.post("/v1/comparisons", json={"results": rows})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def _draw(fmt: str, names: tuple[str, ...] = NAMES, **options: Any) -> plots.Rendered:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph is a UserWarning of matplotlib
        return cd_diagram_svg(
            names,
            [1.0, 2.0, 3.0][: len(names)],
            [[0, 1], [1, 2]],
            critical_difference=1.2,
            title="nemenyi, alpha = 0.05, N = 8",
            fmt=fmt,
            options=plots.FigureOptions(**options),
        )


def test_every_character_of_the_names_has_a_glyph_in_the_font_list() -> None:
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    charmaps = []
    for family in plots.font_families():
        path = font_manager.findfont(
            font_manager.FontProperties(family=family), fallback_to_default=False
        )
        charmaps.append(FT2Font(path).get_charmap())
    assert "Noto Sans CJK JP" in plots.font_families(), (
        "fonts-noto-cjk is not installed (apt-get install fonts-noto-cjk, then delete "
        "matplotlib's fontlist-v*.json cache)"
    )
    for ch in "".join(NAMES):
        assert any(ord(ch) in cm for cm in charmaps), ch
    assert plots.missing_glyphs(NAMES) == ()
    # a private-use character is in no font: the check can fail
    assert plots.missing_glyphs(["a\U0010fffd b\t"]) == ("\U0010fffd",)


def test_cd_diagram_draws_cjk_and_greek_names_in_every_format() -> None:
    svg = _draw("svg")  # no matplotlib warning (warnings are errors in _draw)
    assert svg.missing_glyphs == ()
    assert svg.header() == {}
    text = svg.content.decode()
    for name in NAMES:
        assert re.search(rf"<text[^>]*>{re.escape(name)} \(", text), name
    assert "Noto Sans CJK JP" in text  # the fallback family is named for the viewer
    assert "<dc:date>" not in text
    pdf = _draw("pdf")
    assert pdf.content.startswith(b"%PDF")
    assert b"NotoSansCJK" in pdf.content  # the CJK font is embedded (a TrueType subset)
    assert b"DejaVuSans" in pdf.content
    assert b"/CreationDate" not in pdf.content
    assert b"/Producer" not in pdf.content
    assert _draw("pdf").content == pdf.content
    assert _draw("svg").content == svg.content


def test_png_dpi_and_size_are_honoured() -> None:
    default = Image.open(io.BytesIO(_draw("png").content))
    assert default.info["dpi"] == pytest.approx((300, 300), abs=0.01)
    small = Image.open(io.BytesIO(_draw("png", dpi=100).content))
    assert small.info["dpi"] == pytest.approx((100, 100), abs=0.01)
    assert small.size[0] == pytest.approx(default.size[0] / 3, rel=0.02)
    narrow = Image.open(io.BytesIO(_draw("png", dpi=100, width=3.5).content))
    # drawn 3.5 in wide, then trimmed to the drawn content (labels may reach past the edge)
    assert 0.4 * small.size[0] < narrow.size[0] < 0.75 * small.size[0]
    big_font = _draw("svg", font_size=14).content
    assert b"font-size: 14px" in big_font
    assert b"font-size: 14px" not in _draw("svg").content


def test_a_missing_font_still_draws_and_names_the_characters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(plots, "FONT_FAMILY", ("DejaVu Sans", "No Such CJK Font"))
    assert plots.font_families() == ("DejaVu Sans",)
    with pytest.warns(UserWarning, match="missing from font"):  # matplotlib agrees
        drawn = cd_diagram_svg(
            NAMES, [1.0, 2.0, 3.0], [], critical_difference=None, title="t", fmt="png"
        )
    assert drawn.content.startswith(b"\x89PNG")
    assert drawn.missing_glyphs == ("子", "粒", "群")
    assert drawn.header() == {plots.MISSING_GLYPHS_HEADER: "U+5B50 U+7C92 U+7FA4"}


def test_figure_options_bounds_and_etag_variants() -> None:
    assert plots.FigureOptions().variant("svg") == ""
    assert plots.FigureOptions().variant("png") == "-300"
    assert plots.FigureOptions(dpi=60, width=3.5, font_size=12).variant("png") == "-60-w3.5-f12"
    assert plots.FigureOptions(height=2).variant("pdf") == "-h2"
    for bad in ({"dpi": 49}, {"dpi": 601}, {"width": 0.5}, {"height": 21}, {"font_size": 4}):
        with pytest.raises(ValueError, match="must be in"):
            plots.FigureOptions(**bad)


def test_cd_diagram_routes(client: TestClient) -> None:
    cid = _comparison(client)
    base = f"/v1/comparisons/{cid}/cd-diagram"
    svg = client.get(base + ".svg")
    assert svg.status_code == 200, svg.text
    assert "粒子群 (" in svg.text
    assert "<text" in svg.text
    assert plots.MISSING_GLYPHS_HEADER.lower() not in svg.headers
    pdf = client.get(base + ".pdf?width=5&font_size=9")
    assert pdf.status_code == 200
    assert pdf.headers["content-type"] == "application/pdf"
    assert b"NotoSansCJK" in pdf.content
    assert client.get(base + ".pdf?width=5&font_size=9").content == pdf.content
    png = client.get(base + ".png?dpi=72")
    assert png.headers["content-type"] == "image/png"
    assert Image.open(io.BytesIO(png.content)).info["dpi"] == pytest.approx((72, 72), abs=0.01)
    assert Image.open(io.BytesIO(client.get(base + ".png").content)).info["dpi"] == (
        pytest.approx((300, 300), abs=0.01)
    )


@pytest.mark.parametrize(
    ("suffix", "field"),
    [
        (".svg?width=21", "width"),
        (".pdf?height=0.5", "height"),
        (".svg?font_size=25", "font_size"),
        (".png?dpi=49", "dpi"),
        (".png?font_size=big", "font_size"),
    ],
)
def test_cd_diagram_options_are_validated(client: TestClient, suffix: str, field: str) -> None:
    cid = _comparison(client, ("A", "B", "C"))
    r = client.get(f"/v1/comparisons/{cid}/cd-diagram{suffix}")
    assert r.status_code == 422
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["field"] == field


def test_cd_diagram_header_when_the_cjk_font_is_missing(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    cid = _comparison(client)
    monkeypatch.setattr(plots, "FONT_FAMILY", ("DejaVu Sans",))
    with pytest.warns(UserWarning, match="missing from font"):
        r = client.get(f"/v1/comparisons/{cid}/cd-diagram.svg")
    assert r.status_code == 200
    assert r.headers[plots.MISSING_GLYPHS_HEADER] == "U+5B50 U+7C92 U+7FA4"


def test_cd_diagram_etag_is_the_hash_of_its_bytes_and_revalidates(client: TestClient) -> None:
    cid = _comparison(client, ("A", "B", "C"))
    for suffix in (".svg", ".pdf?width=4", ".png?dpi=60"):
        url = f"/v1/comparisons/{cid}/cd-diagram{suffix}"
        first = client.get(url)
        assert first.status_code == 200
        assert first.headers["etag"] == f'"{hashlib.sha256(first.content).hexdigest()}"'
        assert first.headers["cache-control"] == "no-cache"
        again = client.get(url, headers={"If-None-Match": first.headers["etag"]})
        assert again.status_code == 304
        assert again.content == b""
        assert again.headers["etag"] == first.headers["etag"]
        other = client.get(url, headers={"If-None-Match": '"0000"'})
        assert other.status_code == 200
        assert other.content == first.content


def test_the_api_preloads_matplotlib_in_the_background(tmp_path: Any) -> None:
    import threading
    import time

    from app.main import create_app
    from tests.api.conftest import api_settings
    from tests.support import migrate

    settings = api_settings(tmp_path, preload_figures=True)
    migrate(settings.database_url)
    with TestClient(create_app(settings)) as client:
        assert client.get("/healthz").status_code == 200  # answers while it preloads
        deadline = time.monotonic() + 60
        while any(t.name == "absrank-preload" for t in threading.enumerate()):
            assert time.monotonic() < deadline, "the preload thread did not finish"
            time.sleep(0.05)
    assert plots._PRELOADED.is_set()
    plots.preload()  # idempotent: a second call draws nothing
    assert plots._PRELOADED.is_set()
