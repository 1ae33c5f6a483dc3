"""The client's results archive: every input kind, reading back, and the CLI commands."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from absrank_client import Client, InvalidInput, ResultSet
from typer.testing import CliRunner

from tests.api.conftest import InlineDispatcher as Dispatcher

runner = CliRunner()
SPHERE = "classic/sphere/d2"
ROWS = [
    {"function_id": SPHERE, "run": 0, "value": 0.5, "budget": 100},
    {
        "function_id": SPHERE,
        "run": 1,
        "value": 0.25,
        "budget": 100,
        "trajectory": {"evaluations": [1, 10], "best": [2.0, 0.25]},
    },
]
LONG_CSV = (
    "function_id,run,evaluations,value,budget\n"
    f"{SPHERE},0,,0.5,100\n{SPHERE},1,1,2.0,100\n{SPHERE},1,10,0.25,100\n"
)


@pytest.fixture(autouse=True)
def _hold(dispatcher: Dispatcher) -> None:
    dispatcher.hold = True  # queue the tables a set needs, build none


def test_rows_a_csv_file_and_a_frame_are_the_same_set(client: Client, tmp_path: Path) -> None:
    made = client.create_result_set(ROWS, name="DE", values_are="f", version="1")
    assert isinstance(made, ResultSet)
    assert made.created
    assert (made.n_runs, made.n_functions, made.has_trajectories) == (2, 1, True)
    assert made.queued is not None
    assert made.queued.tables == (SPHERE,)
    path = tmp_path / "runs.csv"
    path.write_text(LONG_CSV)
    again = client.create_result_set(path, name="DE", values_are="f", version="1")
    assert (again.id, again.created) == (made.id, False)
    frame = pd.read_csv(path, dtype={"evaluations": "Int64"})
    from_frame = client.create_result_set(frame, name="DE", values_are="f", version="1")
    assert from_frame.id == made.id


def test_an_upload_with_a_format_is_multipart(client: Client, tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(LONG_CSV)
    up = client.create_result_set(path, format="csv", name="DE", values_are="f", version="1")
    assert up.created
    assert up.source_format == "csv"
    assert up.n_runs == 2


def test_read_back_list_and_csv(client: Client, tmp_path: Path) -> None:
    made = client.create_result_set(ROWS, name="DE", values_are="f")
    other = client.create_result_set(ROWS[:1], name="PSO", values_are="f")
    page = client.result_sets()
    assert page.total == 2
    assert [s.id for s in page.items] == [other.id, made.id]
    assert [s.id for s in client.result_sets(algorithm="DE").items] == [made.id]
    full = client.result_set(made.id, runs=True)
    assert full.runs is not None
    assert full.runs[1].trajectory == ((1, 10), (2.0, 0.25))
    (f,) = full.functions
    assert (f.function_id, f.runs, f.value_median) == (SPHERE, 2, 0.375)
    assert client.result_set(made.id).runs is None
    out = tmp_path / "back.csv"
    text = client.result_set_csv(made.id, out)
    assert out.read_text() == text
    assert text.splitlines()[3:] == LONG_CSV.splitlines()
    assert client.create_result_set(out, name="DE", values_are="f").id == made.id
    assert page.to_frame()["name"].tolist() == ["PSO", "DE"]


def test_refusals_are_typed(client: Client) -> None:
    with pytest.raises(InvalidInput) as info:
        client.create_result_set([dict(ROWS[0], value=-1.0)], name="DE", values_are="f")
    assert info.value.field == "results.0.value"
    with pytest.raises(ValueError, match="no rows"):
        client.create_result_set([], name="DE", values_are="f")


def test_cli_upload_lists_and_shows(cli_app: object, tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(LONG_CSV)
    r = runner.invoke(
        cli_app,  # type: ignore[arg-type]
        ["upload", str(path), "--name", "DE", "--values-are", "f", "--output", "json"],
    )
    assert r.exit_code == 0, r.output
    made = json.loads(r.stdout)
    assert made["n_runs"] == 2
    assert made["name"] == "DE"
    assert f"result set {made['id']} (stored)" in r.stderr
    again = runner.invoke(cli_app, ["upload", str(path), "--name", "DE", "--values-are", "f"])  # type: ignore[arg-type]
    assert again.exit_code == 0
    assert "archived already" in again.stderr
    assert SPHERE in again.stdout
    assert "0.375" in again.stdout
    listed = runner.invoke(cli_app, ["result-sets", "--format", "csv"])  # type: ignore[arg-type]
    assert listed.exit_code == 0
    assert made["id"] in listed.stdout
    back = tmp_path / "back.csv"
    shown = runner.invoke(cli_app, ["result-set", made["id"], "--csv", str(back)])  # type: ignore[arg-type]
    assert shown.exit_code == 0, shown.output
    assert back.read_text().splitlines()[3:] == LONG_CSV.splitlines()
    bad = runner.invoke(cli_app, ["upload", str(path), "--name", "DE"])  # type: ignore[arg-type]
    assert bad.exit_code == 2
    assert "values_are" in bad.stderr


def test_cli_uploads_a_cocoex_archive(cli_app: object, tmp_path: Path) -> None:
    from tests.unit.importers.loggers import run_cocoex, zip_folder

    folder, _ = run_cocoex(tmp_path / "coco", functions="1", instances="1", dimensions="2")
    archive = tmp_path / "exdata.zip"
    archive.write_bytes(zip_folder(folder))
    r = runner.invoke(
        cli_app,  # type: ignore[arg-type]
        ["upload", str(archive), "--format", "coco", "--version", "1", "-o", "json"],
    )
    assert r.exit_code == 0, r.output
    made = json.loads(r.stdout)
    assert (made["name"], made["values_are"], made["source_format"]) == (
        "seeded-rs",
        "error",
        "coco",
    )
    assert [f["function_id"] for f in made["functions"]] == ["bbob/f1/i1/d2"]


def test_an_archive_without_a_format_is_refused_in_the_client(
    cli_app: object, client: Client, tmp_path: Path
) -> None:
    import gzip
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bbobexp_f1.info", "funcId = 1, DIM = 2\n")
    zipped, gzipped = tmp_path / "exdata.zip", tmp_path / "exdata.tgz"
    zipped.write_bytes(buffer.getvalue())
    gzipped.write_bytes(gzip.compress(b"x"))
    for path in (zipped, gzipped):
        with pytest.raises(ValueError, match=r"is an archive .* give its format"):
            client.create_result_set(path)
    r = runner.invoke(cli_app, ["upload", str(zipped)])  # type: ignore[arg-type]
    assert r.exit_code != 0
    assert "--format" in r.output
    assert "Field required" not in r.output
    assert client.result_sets().total == 0
