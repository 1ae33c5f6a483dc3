"""README.md is the product's face: it stands alone, and every output it prints is generated.

Output blocks are regenerated from real runs by ``scripts/readme_outputs.py`` (the examples and
the client's CLI against the real app); a block that is not generated says it is illustrative
and what changes it.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "client" / "README.md"]

FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```$", re.DOTALL | re.MULTILINE)
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)|<(?P<auto>https?://[^>]+)>")
LOOPBACK = re.compile(r"^https?://(127\.0\.0\.1|localhost)(:\d+)?(/|$)")


def _outputs() -> ModuleType:
    name = "readme_outputs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.mark.parametrize("doc", [d for d in DOCS if d.exists()], ids=lambda d: d.name)
def test_docs_stand_alone(doc: Path) -> None:
    text = doc.read_text()
    assert "../shared" not in text, f"{doc.name} points outside the repository"
    assert "SPEC.md" not in text, f"{doc.name} cites a spec users lack"
    assert "SPEC §" not in text, f"{doc.name} cites a spec users lack"
    for m in LINK.finditer(text):
        target = m["target"] or m["auto"]
        if target.startswith("#"):
            continue
        if re.match(r"^[a-z]+://", target):
            assert LOOPBACK.match(target), f"{doc.name} links outside the repository: {target}"
            continue
        path = (doc.parent / target.split("#")[0]).resolve()
        assert path.exists(), f"{doc.name} links to a missing file: {target}"


def test_every_output_block_is_generated_or_marked_illustrative() -> None:
    text = README.read_text()
    generated = {m.start("body") for m in _outputs().BLOCK.finditer(text)}
    for m in FENCE.finditer(text):
        info = m["info"].strip()
        if info in {"sh", "python"}:  # commands and code the reader runs, not outputs
            continue
        preceding = text[: m.start()].rstrip().rsplit("\n", 1)[-1]
        if m.start("body") in generated:
            continue
        assert preceding.startswith("<!-- illustrative:"), (
            f"README output block at line {text[: m.start()].count(chr(10)) + 1} is neither "
            "generated (<!-- readme-output: NAME -->) nor marked <!-- illustrative: why -->"
        )


def test_every_generated_block_has_a_generator() -> None:
    outputs = _outputs()
    names = [b.name for b in outputs.readme_blocks(README.read_text())]
    assert names, "README has no generated output blocks"
    assert len(names) == len(set(names))
    assert set(names) <= set(outputs.GENERATORS)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_outputs().GENERATORS))
def test_readme_block_matches_a_real_run(name: str) -> None:
    outputs = _outputs()
    blocks = {b.name: b.body for b in outputs.readme_blocks(README.read_text())}
    assert name in blocks, f"generator {name!r} has no block in README"
    printed = outputs.GENERATORS[name]()
    assert printed == blocks[name], (
        f"README block {name!r} drifted from a real run; regenerate it with "
        f"`.venv/bin/python scripts/readme_outputs.py --write {name}`"
    )
