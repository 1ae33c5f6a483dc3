"""Regenerate, or check, every printed output block of README.md from a real run.

An output block in README.md sits between two markers::

    <!-- readme-output: NAME -->
    ```text
    ...what the generator NAME printed...
    ```
    <!-- /readme-output -->

The fence may name another language (```` ```latex ````, ```` ```csv ````), or be left out: the
block is then Markdown the README renders (a paper table as a table).

Each generator runs a real script (``examples/``, the client's CLI) against the real app,
in-process, with the settings ``make run`` uses (default tables N = 2^16; tasks run inline), on
a fresh SQLite database in a temporary folder, and returns what it printed.

Usage::

    .venv/bin/python scripts/readme_outputs.py --write           # regenerate every block
    .venv/bin/python scripts/readme_outputs.py --check [NAME ...] # exit 1 when a block drifted

``tests/test_readme.py`` runs ``--check`` for every block, so README and scripts cannot drift.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib.util
import io
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CEC_CSV = ROOT / "tests" / "data" / "cec2005_d10_mean_errors_f15_f17.csv"

BLOCK = re.compile(
    r"(?P<open><!-- readme-output: (?P<name>[a-z0-9-]+) -->\n(?P<fence>```[a-z]+\n)?)"
    r"(?P<body>.*?)"
    r"(?P<close>(?(fence)```\n)<!-- /readme-output -->)",
    re.DOTALL,
)


@dataclass(frozen=True)
class Block:
    """One generated block of the README.

    Attributes
    ----------
    name : str
        The marker's name.
    body : str
        The text between the fences, newline-terminated.
    """

    name: str
    body: str


def readme_blocks(text: str) -> list[Block]:
    """Every generated block in README text, in order."""
    return [Block(m["name"], m["body"]) for m in BLOCK.finditer(text)]


def example(name: str) -> ModuleType:
    """The script ``examples/<name>.py`` as a module (its ``main`` takes ``argv``, client)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_SHARED = contextlib.ExitStack()
_shared_client: object | None = None


def shared_client() -> object:
    """One :func:`app_client` per process (closed at exit), so generators share built tables."""
    global _shared_client
    if _shared_client is None:
        _shared_client = _SHARED.enter_context(app_client())
        atexit.register(_SHARED.close)
    return _shared_client


@contextlib.contextmanager
def app_client() -> Iterator[object]:
    """The real app in-process, as ``make run`` configures it, on a fresh database."""
    from fastapi.testclient import TestClient

    from app.config import Settings
    from app.main import create_app
    from workers.inline import InlineDispatcher

    with tempfile.TemporaryDirectory(prefix="absrank-readme-") as tmp:
        settings = Settings(
            environment="test",
            database_url=f"sqlite:///{tmp}/absrank.db",
            queue_url="memory://",
            default_tables=False,
        )
        dispatcher = InlineDispatcher(settings)  # tables are built inside the request
        _migrate(settings.database_url)
        app = create_app(settings, dispatcher=dispatcher)
        dispatcher.app = app
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            yield client


def _printed(run: Callable[[], None]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run()
    text = out.getvalue()
    return text if text.endswith("\n") else text + "\n"


def bbob_demo() -> str:
    """``examples/bbob_demo.py --budget 1000`` on f1, f5, f15, f21 (the README's excerpt)."""
    demo = example("bbob_demo")
    with app_client() as client:
        return _printed(lambda: demo.main(["--budget", "1000", "--functions", "1,5,15,21"], client))


def cec2005_walkthrough() -> str:
    """``examples/cec2005_walkthrough.py`` on the published CEC 2005 F15–F17 means."""
    walk = example("cec2005_walkthrough")
    return _printed(lambda: walk.main([str(CEC_CSV)], shared_client()))


#: The README's CLI command on the CEC 2005 means (after ``--write-long cec2005.csv``).
CLIENT_COMPARE = (
    "compare cec2005.csv --reduction mean --value-runs 25 --budget 100000 --values-are error "
    "--regions nested --posthoc nemenyi --cd-diagram cd.svg"
)


@dataclass(frozen=True)
class CliRun:
    """What one ``absrank-client`` command printed, and the file it wrote.

    Attributes
    ----------
    stdout : str
        Its standard output, newline-terminated.
    written : bytes
        The bytes of the file it was asked to write (a figure).
    """

    stdout: str
    written: bytes


def run_cli(args: list[str], prepare: Callable[[], None], written: str) -> CliRun:
    """``absrank-client ARGS`` against :func:`shared_client`, in a fresh folder.

    ``prepare()`` runs first, in that folder (it writes the command's input files); the command
    must exit 0 and write the figure ``written`` there.
    """
    from absrank_client import Client, cli
    from typer.testing import CliRunner

    http = shared_client()
    factory = cli.client_factory
    cli.client_factory = lambda url, key, timeout: Client(http=http)  # type: ignore[arg-type]
    here = Path.cwd()
    try:
        with tempfile.TemporaryDirectory(prefix="absrank-readme-cli-") as tmp:
            os.chdir(tmp)
            prepare()
            result = CliRunner().invoke(cli.app, args)
            out = Path(written)
            if (
                result.exit_code != 0
                or not out.exists()
                or not out.read_bytes().startswith(b"<?xml")
            ):
                raise RuntimeError(f"absrank-client {' '.join(args)} failed: {result.output}")
            text = result.stdout
            return CliRun(text if text.endswith("\n") else text + "\n", out.read_bytes())
    finally:
        os.chdir(here)
        cli.client_factory = factory


def client_compare() -> str:
    """``absrank-client compare`` on the CEC 2005 means in long format, with a CD diagram."""
    walk = example("cec2005_walkthrough")

    def prepare() -> None:
        walk.main([str(CEC_CSV), "--write-long", "cec2005.csv"])

    return run_cli([*CLIENT_COMPARE.split(), "--no-progress"], prepare, "cd.svg").stdout


#: The README's walkthrough of the archive: these BBOB functions (d = 10), five runs each.
COCO_ARCHIVE_FUNCTIONS = (1, 5, 15, 21)


def seed_bbob_sets(http: object, functions: tuple[int, ...]) -> list[str]:
    """Archive the BBOB demo's sets (DE, DA, RS; d = 10, five runs each) on ``functions`` only.

    ``make run`` archives them on f1-f24; a set's runs on one function do not depend on its
    others, so what is read about these functions is the same, and the seeding short. Returns
    the sets' ids in the order of :func:`app.services.archive_seed.bbob_sets`.
    """
    from app.services import archive_seed, result_sets

    wanted = tuple(f"bbob/f{n}/i1/d10," for n in functions)
    state = http.app.state  # type: ignore[attr-defined]
    ids = []
    for meta, data in archive_seed.bbob_sets():
        lines = data.decode().splitlines(keepends=True)
        kept = [ln for ln in lines if not ln.startswith("bbob/") or ln.startswith(wanted)]
        stored = result_sets.create_from_csv(
            state.sessionmaker,
            state.dispatcher.settings,
            state.dispatcher,
            meta,
            "".join(kept).encode(),
            cache=state.table_caches,
            ladder_cache=state.ladder_caches,
        )
        ids.append(stored.read.id)
    return ids


def coco_archive() -> str:
    """``examples/coco_archive.py --functions 1,5,15,21`` after seeding the BBOB demo's sets
    on those functions (:func:`seed_bbob_sets`)."""
    from absrank_client import Client

    walk = example("coco_archive")
    with app_client() as http, tempfile.TemporaryDirectory(prefix="absrank-readme-coco-") as tmp:
        seed_bbob_sets(http, COCO_ARCHIVE_FUNCTIONS)
        functions = ",".join(map(str, COCO_ARCHIVE_FUNCTIONS))
        out = Path(tmp) / "nm-archive"
        client = Client(http=http)  # type: ignore[arg-type]
        return _printed(lambda: walk.main(["--functions", functions, "--out", str(out)], client))


#: The README's trajectories file (two algorithms on the sphere in 2-D, two runs each).
ANYTIME_FILE = "trajectories.csv"


def readme_file(name: str) -> str:
    """The text of a file the README writes with ``cat > NAME <<'TAG'`` (so the command the
    README prints and the file it runs on are the README's own)."""
    found = re.search(
        rf"^cat > {re.escape(name)} <<'(?P<tag>\w+)'\n(?P<text>.*?)^(?P=tag)$",
        README.read_text(),
        re.M | re.S,
    )
    if found is None:
        raise RuntimeError(f"README writes no {name} (cat > {name} <<'TAG')")
    return found["text"]


#: The README's ``absrank-client runtime-distributions`` command on :data:`ANYTIME_FILE`.
ANYTIME_COMMAND = (
    f"runtime-distributions {ANYTIME_FILE} --target 1 --target 0.1 --target 0.01 --budget 10 "
    "--budget 100"
)
CLIENT_ANYTIME = f"{ANYTIME_COMMAND} --plot rank.svg --figure anytime-rank"


def write_anytime_csv() -> None:
    """Write the README's :data:`ANYTIME_FILE` in the current folder."""
    Path(ANYTIME_FILE).write_text(readme_file(ANYTIME_FILE))


def client_runtime_distributions() -> str:
    """``absrank-client runtime-distributions`` on :data:`ANYTIME_FILE`, with a figure."""
    return run_cli(CLIENT_ANYTIME.split(), write_anytime_csv, "rank.svg").stdout


#: The README's request for a paper table, in "Tables for papers" (its body is the README's).
PAPER_TABLE_PATH = "/v1/comparisons?format=markdown"


def _paper_comparison() -> str:
    """The id of the README's paper-table comparison, created on :func:`shared_client`.

    Its body is that of the README's ``curl`` to :data:`PAPER_TABLE_PATH`, read as
    ``tests/api/test_readme_curl.py`` reads it, so the blocks and the command agree.
    """
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.api.test_readme_curl import EXAMPLES

    bodies = [
        c.body for _, curls, _ in EXAMPLES for c in curls if c.path == PAPER_TABLE_PATH and c.body
    ]
    if not bodies:
        raise RuntimeError(f"README has no curl POST {PAPER_TABLE_PATH} with a body")
    http = shared_client()
    answer = http.post(  # type: ignore[attr-defined]
        PAPER_TABLE_PATH, content=bodies[0], headers={"content-type": "application/json"}
    )
    if answer.status_code not in (200, 201):
        raise RuntimeError(f"POST {PAPER_TABLE_PATH} answered {answer.status_code}: {answer.text}")
    return str(answer.headers["location"]).rsplit("/", 1)[-1]


def _paper_answer(query: str) -> str:
    http = shared_client()
    answer = http.get(f"/v1/comparisons/{_paper_comparison()}{query}")  # type: ignore[attr-defined]
    if answer.status_code != 200:
        raise RuntimeError(f"GET …{query} answered {answer.status_code}: {answer.text}")
    text = str(answer.text)
    return text if text.endswith("\n") else text + "\n"


def paper_table_markdown() -> str:
    """The README's paper-table request answered as Markdown (``?format=markdown``)."""
    return _paper_answer("?format=markdown")


def paper_table_latex() -> str:
    """The same comparison as a LaTeX (booktabs) table (``?format=latex``)."""
    return _paper_answer("?format=latex")


def paper_table_csv() -> str:
    """The same comparison as CSV (``?format=csv``, RFC 4180, full precision), its CRLF line
    ends shown as the README's (LF) lines."""
    return _paper_answer("?format=csv").replace("\r\n", "\n")


def paper_summary() -> str:
    """The same comparison's written summary (``/summary``, text)."""
    return _paper_answer("/summary")


PROFILE_CSV = """problem,A,B,dim
p1,10,20,1
p2,30,15,1
p3,5,,4
"""
CLIENT_PROFILES = "profiles costs.csv --kind performance --plot perf.svg"


def client_profiles() -> str:
    """``absrank-client profiles`` on :data:`PROFILE_CSV` (an empty cell: a failure)."""
    from absrank_client import Client, cli
    from typer.testing import CliRunner

    http = shared_client()
    factory = cli.client_factory
    cli.client_factory = lambda url, key, timeout: Client(http=http)  # type: ignore[arg-type]
    here = Path.cwd()
    try:
        with tempfile.TemporaryDirectory(prefix="absrank-readme-profiles-") as tmp:
            os.chdir(tmp)
            Path("costs.csv").write_text(PROFILE_CSV)
            result = CliRunner().invoke(cli.app, CLIENT_PROFILES.split())
            if result.exit_code != 0 or not Path("perf.svg").read_bytes().startswith(b"<?xml"):
                raise RuntimeError(f"absrank-client profiles failed: {result.output}")
            text = result.stdout
    finally:
        os.chdir(here)
        cli.client_factory = factory
    return text if text.endswith("\n") else text + "\n"


#: A Redis URL nothing listens on (port 1: tcpmux, closed on any ordinary machine).
DEAD_REDIS = "redis://127.0.0.1:1/0"


def _answer(response: object) -> str:
    """``HTTP <status>``, its Retry-After (if any) and its JSON body, indented."""
    import json

    status = response.status_code  # type: ignore[attr-defined]
    headers = response.headers  # type: ignore[attr-defined]
    head = f"HTTP {status}" + (
        f"  Retry-After: {headers['retry-after']}" if "retry-after" in headers else ""
    )
    return head + "\n" + json.dumps(response.json(), indent=2) + "\n"  # type: ignore[attr-defined]


def healthz_when_down() -> str:
    """``/healthz`` with the queue up (a SQLite queue file), then with the queue on a Redis
    port nothing listens on, and the 503 of a request that would queue a table then."""
    from fastapi.testclient import TestClient

    from app.config import Settings
    from app.main import create_app
    from workers.app import make_huey
    from workers.tasks import HueyDispatcher

    out: list[str] = []
    with tempfile.TemporaryDirectory(prefix="absrank-readme-") as tmp:
        for label, queue_url in (
            ("the queue answers", f"sqlite:///{tmp}/queue.db"),
            ("the queue is down (a Redis URL nothing listens on)", DEAD_REDIS),
        ):
            settings = Settings(
                environment="test",
                database_url=f"sqlite:///{tmp}/absrank.db",
                queue_url=queue_url,
                queue_timeout_seconds=1,
                default_tables=False,
            )
            _migrate(settings.database_url)
            dispatcher = HueyDispatcher(
                make_huey(settings), retry_after=settings.retry_after_seconds
            )
            app = create_app(settings, dispatcher=dispatcher)
            with TestClient(app, base_url="http://127.0.0.1:8000") as client:
                out.append(f"# GET /healthz: {label}\n" + _answer(client.get("/healthz")))
                if queue_url == DEAD_REDIS:
                    spec = {"function_id": "bbob/f1/i1/d2", "log2n": 12}
                    answer = _answer(client.post("/v1/tables", json=spec))
                    out.append("# POST /v1/tables meanwhile\n" + answer)
    return "".join(out)


def _migrate(url: str) -> None:
    """Apply the migrations to ``url`` (as ``make run`` does before it serves)."""
    from alembic import command
    from alembic.config import Config

    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.set_main_option("sqlalchemy.url", url)
    config.attributes["configure_logger"] = False
    command.upgrade(config, "head")


GENERATORS: dict[str, Callable[[], str]] = {
    "bbob-demo": bbob_demo,
    "cec2005-walkthrough": cec2005_walkthrough,
    "client-compare": client_compare,
    "coco-archive": coco_archive,
    "client-runtime-distributions": client_runtime_distributions,
    "paper-table-markdown": paper_table_markdown,
    "paper-table-latex": paper_table_latex,
    "paper-table-csv": paper_table_csv,
    "paper-summary": paper_summary,
    "client-profiles": client_profiles,
    "healthz-when-down": healthz_when_down,
}


def rewrite(text: str, outputs: dict[str, str]) -> str:
    """README text with the named blocks replaced by ``outputs``."""

    def replace(m: re.Match[str]) -> str:
        body = outputs.get(m["name"], m["body"])
        return m["open"] + body + m["close"]

    return BLOCK.sub(replace, text)


def main(argv: list[str] | None = None) -> int:
    """Regenerate (``--write``) or compare (``--check``) the README's output blocks."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite README.md")
    mode.add_argument("--check", action="store_true", help="exit 1 if a block differs")
    parser.add_argument("names", nargs="*", help="blocks to run (default: all)")
    args = parser.parse_args(argv)
    text = README.read_text()
    present = {b.name: b.body for b in readme_blocks(text)}
    unknown = sorted(set(present) - set(GENERATORS))
    if unknown:
        parser.error(f"README names blocks without a generator: {', '.join(unknown)}")
    names = args.names or sorted(present)
    outputs = {name: GENERATORS[name]() for name in names}
    if args.write:
        README.write_text(rewrite(text, outputs))
        return 0
    drifted = [name for name in names if outputs[name] != present.get(name)]
    for name in drifted:
        print(f"README block {name!r} differs from its generator's output:\n{outputs[name]}")
    return 1 if drifted else 0


if __name__ == "__main__":
    sys.exit(main())
