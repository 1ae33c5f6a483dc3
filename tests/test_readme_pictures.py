"""The README's pictures are real runs: each ``docs/pictures/*.svg`` is what
``scripts/readme_pictures.py`` draws now, and the README shows it with the request that drew it.

Each picture is drawn again (into ``tmp_path``) by the real app in-process and compared byte for
byte with the committed file: figures are deterministic (fixed SVG id salt, no date), so a
difference means the figure changed — or matplotlib or the installed fonts did; regenerate and
commit. The pictures that build tables in 10 dimensions first are marked ``slow``: those of the
CEC 2005 comparison (its three ladders: about two minutes on a fresh database, nothing after
``tests/test_readme.py``'s runs, which build them on the same shared app) and the runtime
figures (BBOB f21's table and ladder, about 20 s); the others take a few seconds.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SCRIPTS = ROOT / "scripts"


def _pictures() -> ModuleType:
    name = "readme_pictures"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules[name]


PICTURES = _pictures()


def _regenerate(name: str) -> str:
    return f"`.venv/bin/python scripts/readme_pictures.py --write {name}` (then commit it)"


def test_every_picture_is_committed_and_nothing_else() -> None:
    committed = {p.stem for p in PICTURES.PICTURES.glob("*.svg")}
    names = set(PICTURES.BY_NAME)
    assert names - committed == set(), (
        f"pictures not committed: {sorted(names - committed)}; draw them with "
        "`.venv/bin/python scripts/readme_pictures.py --write`"
    )
    assert committed - names == set(), (
        f"docs/pictures has files no script draws: {committed - names}"
    )


@pytest.mark.parametrize("name", sorted(PICTURES.BY_NAME))
def test_the_readme_shows_each_picture_with_its_request(name: str) -> None:
    text = README.read_text()
    picture = PICTURES.BY_NAME[name]
    image = f"](docs/pictures/{name}.svg)"
    assert text.count(image) == 1, (
        f"README should show docs/pictures/{name}.svg once, as ![…]{image}"
    )
    caption = text[text.index(image) :].split("\n\n", 2)[1]
    for request in picture.request:
        assert f"`{request}`" in caption, (
            f"the line under README's picture {name} should quote its request `{request}`"
        )


@pytest.mark.parametrize(
    "name",
    [pytest.param(p.name, marks=[pytest.mark.slow] if p.slow else []) for p in PICTURES.ALL],
)
def test_picture_matches_a_real_run(name: str, tmp_path: Path) -> None:
    picture = PICTURES.BY_NAME[name]
    [drawn] = PICTURES.write([picture], tmp_path)
    committed = PICTURES.path_of(picture)
    assert committed.exists(), (
        f"docs/pictures/{name}.svg is missing; draw it with {_regenerate(name)}"
    )
    assert drawn.read_bytes() == committed.read_bytes(), (
        f"docs/pictures/{name}.svg drifted from a real run; regenerate it with {_regenerate(name)}"
    )
