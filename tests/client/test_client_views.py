"""The ``?view=`` fallback of ``compare``/``get_comparison`` and ``cd_diagram``, against the
implementation they had before client.py was split (kept below as the oracle).

The server is the real app; a transport in front of it plays a server without views (a 422
problem on the field ``view`` whenever ``?view=`` is sent) or one that refuses another field.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from absrank_client import Client, Comparison, InvalidInput
from fastapi.testclient import TestClient

from tests.client.test_client import ROWS


class PreSplit(Client):
    """``Client`` with the three methods as they were in client.py at commit 8c820c2."""

    def _send_comparison(self, body: Any, view: str | None, **_job: Any) -> Comparison:
        if view is not None and not self._view_refused:
            try:
                response = self.request("POST", "/v1/comparisons", json=body, params={"view": view})
                return Comparison.parse(response.json())
            except InvalidInput as exc:
                if exc.field != "view":
                    raise
                self._view_refused = True
        return Comparison.parse(self._post("/v1/comparisons", body))

    def get_comparison(
        self, comparison_id: str, *, view: Literal["summary", "full"] | None = "summary"
    ) -> Comparison:
        path = f"/v1/comparisons/{comparison_id}"
        if view is not None and not self._view_refused:
            try:
                return Comparison.parse(self._get(path, {"view": view}))
            except InvalidInput as exc:
                if exc.field != "view":
                    raise
                self._view_refused = True
        return Comparison.parse(self._get(path))

    def cd_diagram(
        self,
        comparison: Comparison | str,
        *,
        format: Literal["svg", "png"] = "svg",
        path: str | os.PathLike[str] | None = None,
    ) -> bytes:
        if format not in ("svg", "png"):
            raise ValueError(f"format must be 'svg' or 'png', got {format!r}")
        cid = comparison.id if isinstance(comparison, Comparison) else comparison
        data = self.request("GET", f"/v1/comparisons/{cid}/cd-diagram.{format}").content
        if path is not None:
            Path(path).write_bytes(data)
        return data


Request = tuple[str, str, tuple[tuple[str, str], ...]]


def _client(
    kind: type[Client], http: TestClient, refuse: str | None
) -> tuple[Client, list[Request]]:
    """A ``kind`` client of the app; with ``refuse``, ``?view=`` gets a 422 on that field."""
    log: list[Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        params = tuple(request.url.params.multi_items())
        log.append((request.method, request.url.path, params))
        if refuse is not None and "view" in request.url.params:
            problem = {"title": "Unprocessable Content", "status": 422, "field": refuse}
            return httpx.Response(422, json=problem)
        answer = http.request(
            request.method, request.url.path, params=params, content=request.content,
            headers={k: v for k, v in request.headers.items() if k != "host"},
        )  # fmt: skip
        return httpx.Response(answer.status_code, headers=answer.headers, content=answer.content)

    transport = httpx.Client(transport=httpx.MockTransport(handle), base_url="http://testserver")
    return kind(http=transport, poll_interval=0.01, poll_max=0.05, wait_timeout=30), log


def _session(client: Client) -> list[Any]:
    """compare and get_comparison with and without a view, twice over (the refusal sticks)."""
    out: list[Any] = []
    views: tuple[Literal["summary", "full"] | None, ...] = ("summary", "full", None)
    for _ in range(2):
        cmp = client.compare(ROWS, absolute="off", view="summary")
        out.append((cmp.id, cmp.algorithms, cmp.summary))
        for view in views:
            again = client.get_comparison(cmp.id, view=view)
            out.append((again.id, again.summary, sorted(again.raw)))
    return out


@pytest.mark.parametrize("refuse", [None, "view"])
def test_the_view_fallback_sends_and_answers_as_before(
    http: TestClient, refuse: str | None
) -> None:
    new, new_log = _client(Client, http, refuse)
    old, old_log = _client(PreSplit, http, refuse)
    assert _session(new) == _session(old)
    assert new_log == old_log
    with_view = [r for r in new_log if dict(r[2]).get("view")]
    assert len(with_view) == (1 if refuse == "view" else 6)  # once refused, never sent again
    assert new._view_refused is old._view_refused is (refuse == "view")


def test_a_422_on_another_field_is_raised_as_before(http: TestClient) -> None:
    new, new_log = _client(Client, http, "reduction")
    old, old_log = _client(PreSplit, http, "reduction")
    for client in (new, old):
        with pytest.raises(InvalidInput) as info:
            client.compare(ROWS, absolute="off")
        assert info.value.field == "reduction"
        with pytest.raises(InvalidInput):
            client.get_comparison("cwhatever")
        assert client._view_refused is False
    assert new_log == old_log


def test_cd_diagram_requests_writes_and_refuses_as_before(http: TestClient, tmp_path: Path) -> None:
    new, new_log = _client(Client, http, None)
    old, old_log = _client(PreSplit, http, None)
    cmp = new.compare(ROWS, absolute="off")
    old.compare(ROWS, absolute="off")
    for name, client in (("new", new), ("old", old)):
        formats: tuple[Literal["svg", "png"], ...] = ("svg", "png")
        for fmt in formats:
            data = client.cd_diagram(cmp, format=fmt, path=tmp_path / f"{name}.{fmt}")
            assert (tmp_path / f"{name}.{fmt}").read_bytes() == data
        assert client.cd_diagram(cmp.id, format="png")[:4] == b"\x89PNG"
    assert new_log == old_log
    for client in (new, old):
        with pytest.raises(ValueError, match="format must be"):
            client.cd_diagram(cmp, format="eps", path=tmp_path / "x.eps")  # type: ignore[arg-type]
    assert not (tmp_path / "x.eps").exists()


def test_cd_diagram_as_pdf_with_the_figure_options(http: TestClient, tmp_path: Path) -> None:
    client, log = _client(Client, http, None)
    cmp = client.compare(ROWS, absolute="off")
    pdf = client.cd_diagram(cmp, format="pdf", width=4, font_size=9, path=tmp_path / "cd.pdf")
    assert pdf.startswith(b"%PDF")
    assert (tmp_path / "cd.pdf").read_bytes() == pdf
    png = client.cd_diagram(cmp, format="png", dpi=60, height=2)
    assert png[:4] == b"\x89PNG"
    sent = [(path, dict(params)) for _, path, params in log if "cd-diagram" in path]
    assert sent == [
        (f"/v1/comparisons/{cmp.id}/cd-diagram.pdf", {"width": "4", "font_size": "9"}),
        (f"/v1/comparisons/{cmp.id}/cd-diagram.png", {"height": "2", "dpi": "60"}),
    ]
    with pytest.raises(ValueError, match="format must be 'svg', 'pdf' or 'png', got 'eps'"):
        client.cd_diagram(cmp, format="eps")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput) as info:
        client.cd_diagram(cmp, format="svg", width=30)
    assert info.value.field == "width"
