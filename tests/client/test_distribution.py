"""The client distribution stands alone: no server dependency declared, imported or loaded."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "client"
PACKAGE = CLIENT / "src" / "absrank_client"

#: The server's own dependencies (and the server itself), which the client must not need.
SERVER = {
    "absrank",
    "app",
    "workers",
    "fastapi",
    "starlette",
    "uvicorn",
    "sqlalchemy",
    "alembic",
    "psycopg",
    "huey",
    "redis",
    "cocoex",
    "coco-experiment",
    "numpy",
    "scipy",
    "statsmodels",
    "matplotlib",
    "moocore",
    "pydantic",
    "pydantic-settings",
    "opfunu",
}
ALLOWED_THIRD_PARTY = {"httpx", "typer", "rich", "pandas"}


def _project() -> dict:
    return tomllib.loads((CLIENT / "pyproject.toml").read_text())["project"]


def test_the_declared_dependencies_are_small() -> None:
    project = _project()
    assert project["name"] == "absrank-client"
    names = {Requirement(r).name.lower() for r in project["dependencies"]}
    assert names == {"httpx", "typer", "rich"}
    assert not names & SERVER
    extras = {Requirement(r).name.lower() for r in project["optional-dependencies"]["pandas"]}
    assert extras == {"pandas"}
    assert project["scripts"]["absrank-client"] == "absrank_client.cli:main"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_the_modules_import_only_the_stdlib_and_the_declared_libraries() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) >= 6
    for path in modules:
        third_party = {
            m for m in _imports(path) if m not in sys.stdlib_module_names and m != "absrank_client"
        }
        assert third_party <= ALLOWED_THIRD_PARTY, (path.name, third_party)
        assert not third_party & SERVER


def test_importing_the_client_and_its_cli_loads_no_server_module(tmp_path: Path) -> None:
    code = (
        "import sys, absrank_client, absrank_client.cli\n"
        "c = absrank_client.Client('http://127.0.0.1:1'); c.close()\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {sorted(SERVER)!r})\n"
        "assert not bad, bad\n"
        "assert 'pandas' not in sys.modules\n"
        "print(absrank_client.__file__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).is_relative_to(PACKAGE)


def test_every_api_path_has_a_client_method(http: object) -> None:
    import re

    source = "".join(p.read_text() for p in sorted(PACKAGE.glob("*.py")))
    used = set(re.findall(r'f?"(/(?:v1|healthz)[^"]*)"', source))
    patterns = [
        re.compile("^" + re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(p)) + "$") for p in used
    ]
    paths = http.get("/openapi.json").json()["paths"]  # type: ignore[attr-defined]
    missing = [p for p in paths if not any(pat.match(p) for pat in patterns)]
    assert not missing, missing
    from absrank_client import Client

    tests = [p.removeprefix("/v1/tests/") for p in paths if p.startswith("/v1/tests/")]
    assert len(tests) == 9
    assert [t for t in tests if not hasattr(Client, t.replace("-", "_"))] == []


def test_the_readme_lists_every_public_method() -> None:
    import inspect

    from absrank_client import Client

    readme = (CLIENT / "README.md").read_text()
    public = [n for n, f in inspect.getmembers(Client, inspect.isfunction) if not n.startswith("_")]
    assert len(public) >= 35
    missing = [n for n in public if f"`{n}(" not in readme and n != "close"]
    assert not missing, missing
