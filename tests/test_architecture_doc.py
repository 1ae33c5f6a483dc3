"""docs/ARCHITECTURE.md cannot go stale silently: every file and name it cites exists.

Checked, for every backticked token outside code blocks:

* a repository path (``app/services/ranks/``, ``workers/tasks.py``, ``pyproject.toml``...) is a
  file or folder of the repository;
* a bare file name (``_eq28.py``, cited inside its package's paragraph) is a file somewhere
  under ``app/``, ``workers/``, ``tests/`` or ``scripts/``;
* a dotted name under ``app`` or ``workers`` (``app.services.ranks.rank_values``) is a module,
  or a name that module defines or imports at top level (read from its source, not imported).

Placeholders (``app/services/<resource>.py``) and tokens with spaces are skipped.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"

FENCE = re.compile(r"^```.*?^```$", re.DOTALL | re.MULTILINE)
TICKED = re.compile(r"`([^`\n]+)`")
TOP_DIRS = (
    "app",
    "workers",
    "tests",
    "docs",
    "scripts",
    "migrations",
    "client",
    "bench",
    "examples",
)
ROOT_FILES = {"pyproject.toml", ".env.example", "alembic.ini", "Makefile", "README.md"}
FILE_SUFFIX = re.compile(r"^[\w.-]+\.(py|toml|md|ini|json|csv)$")
DOTTED = re.compile(r"^(app|workers)(\.\w+)+$")
SEARCHED = ("app", "workers", "tests", "scripts")


def _tokens() -> list[str]:
    text = FENCE.sub("", DOC.read_text())
    out = []
    for m in TICKED.finditer(text):
        tok = m[1].strip()
        if "<" in tok or " " in tok:
            continue
        out.append(re.sub(r"\(.*\)$", "", tok))  # `upgrade()`, `model_response(Model, ...)`
    return out


def _is_path(tok: str) -> bool:
    return tok in ROOT_FILES or (
        "/" in tok and not tok.startswith("/") and tok.split("/", 1)[0] in TOP_DIRS
    )


@cache
def _basenames() -> frozenset[str]:
    return frozenset(p.name for d in SEARCHED for p in (ROOT / d).rglob("*") if p.is_file())


def _module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@cache
def _top_level_names(path: Path) -> frozenset[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names)


def _dotted_exists(name: str) -> bool:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        module = _module_file(parts[:i])
        if module is not None:
            rest = parts[i:]
            # a module, or one of its top-level names (an attribute of a class is not checked)
            return not rest or rest[0] in _top_level_names(module)
        if (ROOT.joinpath(*parts[:i])).is_dir() and i == len(parts):
            return True  # a namespace folder
    return False


def test_the_doc_cites_paths() -> None:
    tokens = _tokens()
    assert sum(_is_path(t) for t in tokens) > 50, "the token extraction found almost no paths"
    assert any(DOTTED.match(t) for t in tokens)


@pytest.mark.parametrize("kind", ["paths", "file names", "dotted names"])
def test_every_cited_path_and_name_exists(kind: str) -> None:
    tokens = _tokens()
    if kind == "paths":
        missing = [t for t in tokens if _is_path(t) and not (ROOT / t.rstrip("/")).exists()]
    elif kind == "file names":
        missing = [
            t for t in tokens if not _is_path(t) and FILE_SUFFIX.match(t) and t not in _basenames()
        ]
    else:
        missing = [t for t in tokens if DOTTED.match(t) and not _dotted_exists(t)]
    assert missing == [], f"docs/ARCHITECTURE.md cites {kind} that do not exist: {missing}"


def test_the_check_can_fail() -> None:
    assert not _dotted_exists("app.services.ranks.no_such_function")
    assert not _dotted_exists("app.no_such_module")
    assert _dotted_exists("app.services.ranks.rank_values")
    assert _dotted_exists("app.domain.notices.Warning")
    assert not (ROOT / "app/services/no_such_file.py").exists()
    assert "_eq28.py" in _basenames()
