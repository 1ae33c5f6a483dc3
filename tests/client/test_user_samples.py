"""The client's methods for your own function: user tables, inline samples, Eq. 29."""

from __future__ import annotations

from pathlib import Path

from absrank_client import Client

FIG9 = [1.0, 3.0, 4.0, 6.0]


def test_user_table_from_values_and_from_a_file_is_the_same(client: Client, tmp_path: Path) -> None:
    table = client.user_table(FIG9, name="fig9", sampled_by="me")
    assert table.id.startswith("user/")
    path = tmp_path / "y.csv"
    path.write_text("x,f\n0,6\n1,3\n2,4\n3,1\n")
    again = client.user_table(file=path, column="f", name="fig9", sampled_by="me")
    assert again.id == table.id
    ranked = client.ranks(table_id=table.id, values=[2.0], tail="paper")
    inline = client.ranks(sample=FIG9, values=[2.0], tail="paper")
    assert ranked.ranks[0].v == inline.ranks[0].v
    assert abs(inline.ranks[0].v - 0.3) < 1e-15  # (1/5 + 2/5)/2


def test_rank_spread(client: Client) -> None:
    got = client.rank_spread([0.1, 0.4, 0.5])
    assert abs(got["e"] - (0.3 * 0.1) ** 0.5) < 1e-15
    assert client.rank_spread(log10_v=[None, -2.0])["k"] == 2


def test_cli_user_table(cli_app: object, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    path = tmp_path / "y.txt"
    path.write_text("6\n3\n4\n1\n")
    out = CliRunner().invoke(cli_app, ["user-table", str(path), "--name", "fig9", "-f", "json"])  # type: ignore[arg-type]
    assert out.exit_code == 0, out.output
    assert '"id": "user/' in out.output
