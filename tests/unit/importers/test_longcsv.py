"""The archive's long CSV: layouts, exact values, and each fault named by file and line."""

from __future__ import annotations

import itertools

import pytest

from app.domain.errors import InvalidInput, UploadTooLarge
from app.domain.importers import UploadedFile, UploadLimits, longcsv
from app.domain.results import MalformedFile, RunResult, Trajectory

LIMITS = UploadLimits()


def read(text: str, *, values_are: str = "f", name: str = "runs.csv", **limits: int):
    lim = UploadLimits(**limits) if limits else LIMITS
    return longcsv.read([UploadedFile(name, text.encode())], limits=lim, values_are=values_are)


def fault(text: str, **kw: object) -> MalformedFile:
    with pytest.raises(MalformedFile) as info:
        read(text, **kw)  # type: ignore[arg-type]
    return info.value


def test_one_row_per_run_in_any_column_order_sorted_by_function_and_run() -> None:
    out = read(
        "# a comment\nBudget, value ,run,function_id\n"
        "1000,0.25,1,classic/sphere/d2\n500,1e-3,0,classic/sphere/d2\n\n"
        "20,100,0,bbob/f1/i1/d2\n"
    )
    assert out.format == "csv"
    assert out.values_are == "f"
    assert out.runs == (
        RunResult("bbob/f1/i1/d2", 0, 100.0, 20),
        RunResult("classic/sphere/d2", 0, 0.001, 500),
        RunResult("classic/sphere/d2", 1, 0.25, 1000),
    )


def test_trajectory_rows_make_a_run_whose_value_is_its_last_point() -> None:
    out = read(
        "function_id,run,evaluations,value,budget\n"
        "classic/sphere/d2,0,100,0.5,1000\n"  # points in any order
        "classic/sphere/d2,0,1,8.0,1000\n"
        "classic/sphere/d2,0,900,0.125,1000\n"
        "classic/sphere/d2,1,,0.75,400\n"
    )
    first, second = out.runs
    assert first == RunResult(
        "classic/sphere/d2", 0, 0.125, 1000, Trajectory((1, 100, 900), (8.0, 0.5, 0.125))
    )
    assert second == RunResult("classic/sphere/d2", 1, 0.75, 400)


def test_write_then_read_gives_the_same_runs_bit_for_bit() -> None:
    runs = (
        RunResult("classic/sphere/d2", 0, 0.1 + 0.2, 1000, Trajectory((1, 7), (1 / 3, 0.1 + 0.2))),
        RunResult("classic/sphere/d2", 1, 5e-324, 3),
        RunResult("classic/rastrigin/d2", 0, 1.0000000000000002, 10**12),
    )
    ordered = tuple(sorted(runs, key=lambda r: (r.function_id, r.run)))
    text = longcsv.write(ordered, comments=["made by a test"])
    assert text.startswith("# made by a test\nfunction_id,run,evaluations,value,budget\n")
    assert read(text).runs == ordered
    plain = longcsv.write(ordered[2:3])
    assert plain.splitlines()[0] == "function_id,run,value,budget"
    assert read(plain).runs == ordered[2:3]


def test_several_files_form_one_set_and_a_duplicate_names_the_second_file() -> None:
    a = UploadedFile("a.csv", b"function_id,run,value,budget\nclassic/sphere/d2,0,1,10\n")
    b = UploadedFile("b.csv", b"function_id,run,value,budget\nclassic/sphere/d2,1,2,10\n")
    out = longcsv.read([a, b], limits=LIMITS, values_are="f")
    assert [r.run for r in out.runs] == [0, 1]
    with pytest.raises(MalformedFile) as info:
        longcsv.read([a, b, a], limits=LIMITS, values_are="f")
    assert (info.value.file, info.value.line) == ("a.csv", 2)
    assert "duplicate run 0 of classic/sphere/d2 (first on line 2 of a.csv)" in str(info.value)


HEADER = "function_id,run,value,budget\n"
TRAJ = "function_id,run,evaluations,value,budget\n"


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("function_id,run,value\nclassic/sphere/d2,0,1\n", None, "header must name"),
        ("", None, "is empty"),
        (HEADER, None, "no rows"),
        (HEADER + "classic/sphere/d2,0,1\n", 2, "expected 4 fields, got 3"),
        (HEADER + "classic/sphere/d2,0,1,10\nbbob/f25/i1/d2,0,1,10\n", 3, "no function"),
        (HEADER + "classic/sphere/d2,-1,1,10\n", 2, "run '-1' is not an integer"),
        (HEADER + "classic/sphere/d2,0,1,0\n", 2, "budget '0' is not an integer in [1,"),
        (HEADER + "classic/sphere/d2,0,abc,10\n", 2, "value 'abc' is not a number"),
        (HEADER + "classic/sphere/d2,0,1_0,10\n", 2, "not a finite number"),
        (HEADER + "classic/sphere/d2,0,nan,10\n", 2, "not a finite number"),
        (HEADER + "classic/sphere/d2,0,-inf,10\n", 2, "not a finite number"),
        (HEADER + "classic/sphere/d2,0,-0.001,10\n", 2, "below f* = 0.0"),
        (HEADER + "classic/sphere/d2,0,1,10\nclassic/sphere/d2,0,2,10\n", 3, "duplicate run 0"),
        (TRAJ + "classic/sphere/d2,0,5,1,10\nclassic/sphere/d2,0,6,1,11\n", 3, "budget 11 here"),
        (
            TRAJ + "classic/sphere/d2,0,11,1,10\n",
            2,
            "evaluations '11' is not an integer in [1, 10]",
        ),
        (TRAJ + "classic/sphere/d2,0,,1,10\nclassic/sphere/d2,0,3,1,10\n", 3, "final row"),
        (TRAJ + "classic/sphere/d2,0,3,1,10\nclassic/sphere/d2,0,,1,10\n", 3, "duplicate run"),
        (TRAJ + "classic/sphere/d2,0,3,1,10\nclassic/sphere/d2,0,3,0.5,10\n", 3, "two points"),
        (TRAJ + "classic/sphere/d2,0,3,1,10\nclassic/sphere/d2,0,5,2,10\n", 3, "is above"),
        ('# c\n\n# c\nfunction_id,run,value,budget\n"x,1\n', 5, "expected 4 fields"),
    ],
)
def test_each_fault_names_the_file_and_the_line(text: str, line: int | None, words: str) -> None:
    err = fault(text)
    assert err.file == "runs.csv"
    assert err.line == line
    assert err.field == "file"
    assert words in str(err)
    assert str(err).startswith("runs.csv" + ("" if line is None else f", line {line}") + ": ")


def test_errors_must_not_be_negative_beyond_the_tolerance() -> None:
    ok = read(HEADER + "classic/sphere/d2,0,-1e-9,10\n", values_are="error")
    assert ok.runs[0].value == -1e-9
    err = fault(HEADER + "classic/sphere/d2,0,-1e-7,10\n", values_are="error")
    assert err.line == 2
    assert "below 0" in str(err)


def test_not_utf8_names_the_line_of_the_bad_byte() -> None:
    data = HEADER.encode() + b"classic/sphere/d2,0,1,10\nclassic/sphere/d2,1,\xff,10\n"
    with pytest.raises(MalformedFile) as info:
        longcsv.read([UploadedFile("x.csv", data)], limits=LIMITS, values_are="f")
    assert info.value.line == 3
    assert "not UTF-8" in str(info.value)


def test_reading_stops_at_the_first_row_beyond_max_rows() -> None:
    """A huge file is refused on row max_rows + 1: the rows after it are never parsed."""
    seen = 0

    def rows():
        nonlocal seen
        for i in itertools.count():
            seen += 1
            yield f"classic/sphere/d2,{i},1.0,10\n"

    # 100,000 rows follow the limit; the last one is malformed and would be a different fault
    body = HEADER + "".join(itertools.islice(rows(), 100_010)) + "garbage\n"
    with pytest.raises(UploadTooLarge) as info:
        read(body, max_rows=10)
    # header + 10 rows, then the refused 11th
    assert str(info.value).startswith("runs.csv, line 12: more than 10 rows")
    assert info.value.limit == "max_rows"  # the service names its setting, max_upload_rows
    assert info.value.field == "file"


def test_max_rows_counts_all_files_together() -> None:
    one = UploadedFile("a.csv", (HEADER + "classic/sphere/d2,0,1,10\n" * 1).encode())
    two = UploadedFile(
        "b.csv", (HEADER + "classic/sphere/d2,1,1,10\nclassic/sphere/d2,2,1,10\n").encode()
    )
    with pytest.raises(UploadTooLarge) as info:
        longcsv.read([one, two], limits=UploadLimits(max_rows=2), values_are="f")
    assert str(info.value).startswith("b.csv, line 3: more than 2 rows")


def test_values_are_must_be_declared() -> None:
    with pytest.raises(InvalidInput) as info:
        longcsv.read([UploadedFile("a.csv", b"x")], limits=LIMITS, values_are=None)
    assert info.value.field == "values_are"


def test_a_last_line_without_line_end_is_read_with_a_note() -> None:
    """A cut row cannot be told from a complete one ("79.4" for "79.48"): read, with a note."""
    text = "function_id,run,value,budget\nbbob/f1/i1/d2,0,79.4"
    cut = read(text + ",20", values_are="error")
    assert cut.runs == (RunResult("bbob/f1/i1/d2", 0, 79.4, 20),)
    assert [(n.code, n.file) for n in cut.notes] == [("csv-no-final-newline", "runs.csv")]
    assert "last row is wrong" in cut.notes[0].message
    assert read(text + ",20\n", values_are="error").notes == ()
    assert read(text + ",20\r\n", values_are="error").notes == ()
