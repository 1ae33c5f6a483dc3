"""The client's published-curve methods and CLI commands against the real app."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from absrank_client import Client, LadderCurve, NotFound, TableCurve, TableNotReady
from typer.testing import CliRunner

from tests.api.conftest import InlineDispatcher as Dispatcher

runner = CliRunner()


def _table(client: Client) -> str:
    return client.create_table("bbob/f1/i1/d2").id


def test_table_curve_v1_offline_equals_the_service(client: Client) -> None:
    table_id = _table(client)
    curve = client.table_curve(table_id)
    assert isinstance(curve, TableCurve)
    assert curve.lower_tail.kind == "power"
    assert curve.n == 4096
    assert len(curve.values) == curve.n_knots == len(curve.rows())
    t = [curve.f_opt + e for e in (1e-4, 0.01, 0.5, 3.0, 30.0, 300.0)]  # type: ignore[operator]
    t += [curve.values[7], curve.values[-1]]
    ranks = client.ranks(table_id=table_id, values=t)
    for x, rank in zip(t, ranks.ranks, strict=True):
        assert math.log10(curve.v1(x)) == pytest.approx(rank.log10_v, rel=1e-12), x
    assert curve.v1(curve.f_opt - 1.0) == 0.0  # type: ignore[operator]


def test_table_curve_csv_quantiles_and_plots(client: Client, tmp_path: Path) -> None:
    table_id = _table(client)
    text = client.table_curve_csv(table_id, path=tmp_path / "c.csv")
    assert text.startswith("# absrank table curve")
    assert "\nvalue,count\n" in text
    assert (tmp_path / "c.csv").read_text() == text
    q = client.table_quantiles(table_id, [0.02, 0.05])
    assert [i.v for i in q.items] == [0.02, 0.05]
    assert q.items[0].t is not None
    assert q.items[1].t is not None
    assert q.items[0].t < q.items[1].t
    assert client.table_quantiles(table_id, 0.5).items[0].method == "interpolated"
    svg = client.table_plot(table_id, path=tmp_path / "p.svg")
    assert svg.startswith(b"<?xml")
    assert (tmp_path / "p.svg").read_bytes() == svg
    png = client.table_plot(table_id, format="png", dpi=50)
    assert png.startswith(b"\x89PNG")
    with pytest.raises(ValueError, match="svg"):
        client.table_plot(table_id, format="gif")  # type: ignore[arg-type]


def test_curve_errors_are_typed(client: Client, dispatcher: Dispatcher) -> None:
    with pytest.raises(NotFound):
        client.table_curve("t3f1c0d9a8b7e6f5a4b3c2d1")
    dispatcher.hold = True
    table = client.create_table("classic/sphere/d3", wait=False)
    with pytest.raises(TableNotReady):
        client.table_curve(table)


def test_ladder_curve_and_plot(client: Client, tmp_path: Path) -> None:
    client.create_ladder("classic/sphere/d2")  # the default ladder, which ranks use
    curve = client.ladder_curve("classic/sphere/d2")
    assert isinstance(curve, LadderCurve)
    assert curve.pieces[0].level == 0
    ranks = client.ranks(
        "classic/sphere/d2", [1e-6, 0.01, 1.0], regions="nested", use_analytic=False
    )
    assert ranks.raw["source"]["kind"] == "nested"
    for x, rank in zip([1e-6, 0.01, 1.0], ranks.ranks, strict=True):
        assert math.log10(curve.v1(x)) == pytest.approx(rank.log10_v, rel=1e-12), x
    text = client.ladder_curve_csv("classic/sphere/d2")
    assert "\npiece,value,count\n" in text
    assert client.ladder_plot("classic/sphere/d2").startswith(b"<?xml")
    png = client.ladder_plot("classic/sphere/d2", format="png", dpi=50)
    assert png.startswith(b"\x89PNG")


def test_cli_table_curve_plot_and_quantiles(
    cli_app: object, client: Client, tmp_path: Path
) -> None:
    table_id = _table(client)
    out = tmp_path / "f.csv"
    r = runner.invoke(cli_app, ["table-curve", table_id, "--format", "csv", "-o", str(out)])  # type: ignore[arg-type]
    assert r.exit_code == 0, r.output
    assert out.read_text().startswith("# absrank table curve")
    r = runner.invoke(cli_app, ["table-curve", table_id])  # type: ignore[arg-type]
    assert r.exit_code == 0
    assert json.loads(r.stdout)["table_id"] == table_id
    svg = tmp_path / "f.svg"
    r = runner.invoke(cli_app, ["table-plot", table_id, "-o", str(svg)])  # type: ignore[arg-type]
    assert r.exit_code == 0, r.output
    assert svg.read_bytes().startswith(b"<?xml")
    pdf = tmp_path / "f.pdf"
    r = runner.invoke(
        cli_app, ["table-plot", table_id, "-o", str(pdf), "--width", "3.5", "--font-size", "8"]
    )  # type: ignore[arg-type]
    assert r.exit_code == 0, r.output
    assert pdf.read_bytes().startswith(b"%PDF")
    r = runner.invoke(cli_app, ["table-plot", table_id, "-o", str(pdf), "--width", "30"])  # type: ignore[arg-type]
    assert r.exit_code == 2, r.output
    assert "width" in r.output
    r = runner.invoke(
        cli_app, ["quantiles", table_id, "-v", "0.02", "-v", "0.05", "--format", "csv"]
    )  # type: ignore[arg-type]
    assert r.exit_code == 0, r.output
    lines = r.stdout.strip().splitlines()
    assert lines[0].startswith("v,t,error,method")
    assert len(lines) == 3
    r = runner.invoke(cli_app, ["quantiles", table_id, "-v", "0"])  # type: ignore[arg-type]
    assert r.exit_code == 2
    assert "(0, 1]" in r.output


def test_cli_ladder_curve(cli_app: object, client: Client, tmp_path: Path) -> None:
    client.create_ladder("classic/sphere/d2")
    r = runner.invoke(cli_app, ["table-curve", "classic/sphere/d2", "--ladder"])  # type: ignore[arg-type]
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["function_id"] == "classic/sphere/d2"
    png = tmp_path / "l.png"
    r = runner.invoke(
        cli_app, ["table-plot", "classic/sphere/d2", "--ladder", "-o", str(png), "--dpi", "50"]
    )  # type: ignore[arg-type]
    assert r.exit_code == 0, r.output
    assert png.read_bytes().startswith(b"\x89PNG")


def test_user_table_ids_keep_their_slash(client: Client, cli_app: object, tmp_path: Path) -> None:
    """``user/<hash>`` ids reach ``/v1/tables/user/<hash>/...`` whole (not their last segment)."""
    sample = [6.0, 3.0, 4.0, 1.0, 2.5]
    table = client.user_table(sample, name="five")
    uid = table.id
    assert uid.startswith("user/")
    curve = client.table_curve(uid)
    assert curve.table_id == uid
    assert sorted(curve.values) == sorted(set(sample))
    assert client.table_curve(table).table_id == uid
    assert client.table_curve(f"/v1/tables/{uid}").table_id == uid
    assert client.table_curve(f"http://testserver/v1/tables/{uid}/").table_id == uid
    assert client.get_table(f"/v1/tables/{uid}").id == uid
    assert "\nvalue,count\n" in client.table_curve_csv(uid)
    median = client.table_quantiles(uid, [0.5]).items[0].t
    assert median is not None
    assert min(sample) <= median <= max(sample)
    assert client.table_plot(uid).startswith(b"<?xml")
    out = runner.invoke(cli_app, ["table-curve", uid])  # type: ignore[arg-type]
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["table_id"] == uid
    out = runner.invoke(cli_app, ["quantiles", uid, "-v", "0.5", "-f", "json"])  # type: ignore[arg-type]
    assert out.exit_code == 0, out.output
    out = runner.invoke(cli_app, ["table-plot", uid, "-o", str(tmp_path / "u.svg")])  # type: ignore[arg-type]
    assert out.exit_code == 0, out.output
    assert (tmp_path / "u.svg").read_bytes().startswith(b"<?xml")
