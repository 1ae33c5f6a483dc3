"""Regenerate, or check, the README's pictures (``docs/pictures/*.svg``) from real runs.

Each picture is the SVG answer of one request the README shows — a figure route of the real
app, in-process, as ``make run`` configures it (``scripts/readme_outputs.py``'s
:func:`shared_client`: default tables N = 2^16, tasks run inline, a fresh SQLite database) — or
the file the client's CLI writes. Figures are byte-deterministic (``app/services/plots.py``
fixes the SVG id salt and drops the date), so a committed picture equals a new run's bytes on
the same matplotlib and fonts.

Usage::

    .venv/bin/python scripts/readme_pictures.py --write            # regenerate docs/pictures
    .venv/bin/python scripts/readme_pictures.py --check [NAME ...]  # exit 1 when one drifted
    .venv/bin/python scripts/readme_pictures.py --out DIR [NAME ...]

The pictures of the CEC 2005 comparison build that walkthrough's three ladders first (about two
minutes; nothing when ``readme_outputs.py`` ran in the same process), the runtime figures BBOB
f21's table and ladder (about 20 s).
``tests/test_readme_pictures.py`` draws every picture again and fails when one differs from its
committed file.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import readme_outputs as outputs

ROOT = outputs.ROOT
PICTURES = ROOT / "docs" / "pictures"


@dataclass(frozen=True)
class Picture:
    """One README picture and the request that draws it.

    Attributes
    ----------
    name : str
        The file ``docs/pictures/<name>.svg``.
    request : tuple of str
        The requests that draw it, in order, as the README quotes them (method, path, JSON
        body; ``<id>`` stands for the id the previous answer gave).
    draw : callable
        Sends it to the shared app and returns the SVG bytes.
    slow : bool
        Whether it builds tables and ladders in 10 dimensions first: the CEC 2005 ladders
        (minutes on a fresh database) or BBOB f21's table and ladder (about 20 s).
    """

    name: str
    request: tuple[str, ...]
    draw: Callable[[], bytes]
    slow: bool = False


def _http() -> Any:
    return outputs.shared_client()


def _svg(method: str, path: str, body: object | None = None) -> bytes:
    """The answer to one figure request, which must be a 200 SVG."""
    answer = _http().request(method, path, json=body)
    if answer.status_code != 200 or not answer.content.startswith(b"<?xml"):
        raise RuntimeError(f"{method} {path} answered {answer.status_code}: {answer.text[:500]}")
    return bytes(answer.content)


def _post(path: str, body: Mapping[str, object]) -> Any:
    """POST ``body``; the answer, which must be a 2xx."""
    answer = _http().post(path, json=body)
    if not 200 <= answer.status_code < 300:
        raise RuntimeError(f"POST {path} answered {answer.status_code}: {answer.text[:500]}")
    return answer


def _cec_comparison() -> str:
    """The walkthrough's comparison of the CEC 2005 means (``examples/cec2005_walkthrough.py``)."""
    walk = outputs.example("cec2005_walkthrough")
    answer = walk.compare(_http(), walk.long_rows(outputs.CEC_CSV), wait=3600.0)
    if answer["status"] != "complete":
        raise RuntimeError(f"the CEC 2005 comparison is {answer['status']}")
    return str(answer["id"])


#: The README's table of v1 and its ladder (section "Published tables").
TABLE_REQUEST: dict[str, object] = {"function_id": "bbob/f1/i1/d2"}
LADDER_REQUEST: dict[str, object] = {"function_id": "classic/sphere/d2", "ladder": True}
#: The README's profile requests (section "Anytime analysis"); the data profile adds ``dims``.
PERFORMANCE: dict[str, object] = {
    "kind": "performance",
    "solvers": ["A", "B"],
    "costs": [[10, 20], [30, 15], [5, None]],
}
DATA: dict[str, object] = {**PERFORMANCE, "kind": "data", "dims": [2, 2, 5]}
ACCURACY: dict[str, object] = {
    "kind": "accuracy",
    "solvers": ["A", "B"],
    "final_errors": [[0.001, 0], [1, 0.1]],
    "initial_errors": [1, 10],
}


def _table_plot() -> bytes:
    table = _post("/v1/tables", TABLE_REQUEST).json()["id"]
    return _svg("GET", f"/v1/tables/{table}/plot.svg")


def _ladder_plot() -> bytes:
    _post("/v1/tables", LADDER_REQUEST)
    return _svg("GET", f"/v1/ladders/{LADDER_REQUEST['function_id']}/plot.svg")


def _cd(query: str) -> Callable[[], bytes]:
    return lambda: _svg("GET", f"/v1/comparisons/{_cec_comparison()}/cd-diagram.svg{query}")


#: The BBOB function of the runtime figures (Gallagher's 101 peaks, instance 1, d = 10).
RUNTIME_FUNCTION = 21


@functools.cache
def _bbob_sets() -> tuple[str, ...]:
    """The BBOB demo's sets DE, DA, RS archived on :data:`RUNTIME_FUNCTION` (ids)."""
    return tuple(outputs.seed_bbob_sets(_http(), (RUNTIME_FUNCTION,)))


def runtime_body(figure: str) -> dict[str, object]:
    """The runtime figure's request body, the sets named by ``<DE>``, ``<DA>``, ``<RS>``."""
    body: dict[str, object] = {
        "result_sets": ["<DE>", "<DA>", "<RS>"],
        "function_ids": [f"bbob/f{RUNTIME_FUNCTION}/i1/d10"],
    }
    return body if figure == "anytime-rank" else {**body, "absolute_ranks": False}


def _runtime(figure: str) -> Callable[[], bytes]:
    def draw() -> bytes:
        body = {**runtime_body(figure), "result_sets": list(_bbob_sets())}
        return _svg("POST", f"/v1/runtime-distributions/plot.svg?figure={figure}", body)

    return draw


def _profile(body: Mapping[str, object]) -> Callable[[], bytes]:
    return lambda: _svg("POST", "/v1/profiles/plot.svg", body)


def _json(body: Mapping[str, object]) -> str:
    return json.dumps(body)


ALL: tuple[Picture, ...] = (
    Picture(
        "table-v1",
        (f"POST /v1/tables {_json(TABLE_REQUEST)}", "GET /v1/tables/<id>/plot.svg"),
        _table_plot,
    ),
    Picture(
        "ladder-v1",
        (f"POST /v1/tables {_json(LADDER_REQUEST)}", "GET /v1/ladders/classic/sphere/d2/plot.svg"),
        _ladder_plot,
    ),
    Picture("cd-relative", ("GET /v1/comparisons/<id>/cd-diagram.svg",), _cd(""), slow=True),
    Picture(
        "cd-absolute",
        ("GET /v1/comparisons/<id>/cd-diagram.svg?ranks=absolute",),
        _cd("?ranks=absolute"),
        slow=True,
    ),
    *(
        Picture(
            f"runtime-{f}",
            (f"POST /v1/runtime-distributions/plot.svg?figure={f} {_json(runtime_body(f))}",),
            _runtime(f),
            slow=True,
        )
        for f in ("ecdf", "fixed-budget", "anytime-rank")
    ),
    *(
        Picture(f"profile-{b['kind']}", (f"POST /v1/profiles/plot.svg {_json(b)}",), _profile(b))
        for b in (PERFORMANCE, DATA, ACCURACY)
    ),
)
BY_NAME = {p.name: p for p in ALL}


def path_of(picture: Picture, folder: Path = PICTURES) -> Path:
    """Where ``picture`` is written in ``folder``."""
    return folder / f"{picture.name}.svg"


def write(pictures: Iterable[Picture], folder: Path) -> list[Path]:
    """Draw each picture and write it into ``folder``; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for picture in pictures:
        path = path_of(picture, folder)
        path.write_bytes(picture.draw())
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """Regenerate (``--write``, ``--out``) or compare (``--check``) the README's pictures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite docs/pictures")
    mode.add_argument("--check", action="store_true", help="exit 1 if a picture differs")
    mode.add_argument("--out", type=Path, help="write the pictures into this folder")
    parser.add_argument("names", nargs="*", help=f"default: all of {', '.join(BY_NAME)}")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(BY_NAME))
    if unknown:
        parser.error(f"no such picture: {', '.join(unknown)}")
    chosen = [BY_NAME[n] for n in args.names] if args.names else list(ALL)
    if args.check:
        drifted = [p.name for p in chosen if p.draw() != _committed(p)]
        for name in drifted:
            print(f"docs/pictures/{name}.svg differs from a new run")
        return 1 if drifted else 0
    for path in write(chosen, PICTURES if args.write else args.out):
        print(f"wrote {path}")
    return 0


def _committed(picture: Picture) -> bytes | None:
    path = path_of(picture)
    return path.read_bytes() if path.exists() else None


if __name__ == "__main__":
    sys.exit(main())
