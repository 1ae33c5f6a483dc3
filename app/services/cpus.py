"""Use cases of the CPU registry: search by name (fuzzy), read, add."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.domain import machines
from app.errors import Conflict, NotFound
from app.models.cpus import Cpu
from app.repositories.cpus import CpuRepository, cpu_key
from app.schemas.cpus import CpuCreate, CpuRead

MIN_MATCH = 0.75


def _view(cpu: Cpu, match: float | None = None) -> CpuRead:
    warnings = (
        [
            f"score {cpu.score:g} >= α = {machines.ALPHA}: the runtime model of Arza et al. "
            "cannot use this machine (its scores must be below α)"
        ]
        if cpu.score >= machines.ALPHA
        else []
    )
    return CpuRead(
        id=cpu.id,
        name=cpu.name,
        score=cpu.score,
        source=cpu.source,
        source_date=cpu.source_date,
        created_at=cpu.created_at,
        match=match,
        warnings=warnings,
    )


def _compact(text: str) -> str:
    return "".join(ch for ch in text if ch.isalnum())


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text)


def match_score(query: str, key: str) -> float:
    """How well a folded query matches a folded CPU name (higher is better).

    A query contained in the name, ignoring spaces and punctuation ("i76700hq", "E-5440"),
    scores 2 or more (more when it covers more of the name). Otherwise each query word is
    compared with its most similar name word (difflib ratio, so "intle" finds "intel") and the
    mean of those ratios is the score.
    """
    q, k = _compact(query), _compact(key)
    if q and q in k:
        return 2.0 + len(q) / len(k)
    words, names = _words(query), _words(key)
    if not words or not names:
        return 0.0
    best = [max(SequenceMatcher(None, w, n).ratio() for n in names) for w in words]
    return sum(best) / len(best)


def search(sm: sessionmaker[Session], q: str | None, *, limit: int) -> tuple[list[CpuRead], int]:
    """Entries matching ``q`` (case-insensitive, fuzzy), best first; all by name without ``q``."""
    with session_scope(sm) as session:
        cpus = CpuRepository(session).all()
        if not q or not q.strip():
            return [_view(c) for c in cpus[:limit]], len(cpus)
        query = cpu_key(q)
        scored = [(match_score(query, c.key), c) for c in cpus]
        hits = sorted(
            ((s, c) for s, c in scored if s >= MIN_MATCH), key=lambda sc: (-sc[0], sc[1].key)
        )
        return [_view(c, round(s, 6)) for s, c in hits[:limit]], len(hits)


def get_cpu(sm: sessionmaker[Session], cpu_id: int) -> CpuRead:
    """One entry.

    Raises
    ------
    app.errors.NotFound
        No CPU has this id.
    """
    with session_scope(sm) as session:
        cpu = CpuRepository(session).get(cpu_id)
        if cpu is None:
            raise NotFound(f"no CPU with id {cpu_id}", field="cpu_id")
        return _view(cpu)


def find_cpu(sm: sessionmaker[Session], name: str, *, field: str) -> CpuRead:
    """The entry named ``name`` (case and spacing ignored).

    Raises
    ------
    app.errors.NotFound
        No such CPU; the message suggests the closest names.
    """
    with session_scope(sm) as session:
        cpu = CpuRepository(session).by_name(name)
        if cpu is not None:
            return _view(cpu)
    close, _ = search(sm, name, limit=3)
    hint = f"; did you mean {', '.join(repr(c.name) for c in close)}?" if close else ""
    raise NotFound(
        f"no CPU named {name[:80]!r} in the registry (GET /v1/cpus?q=...){hint}", field=field
    )


def add_cpu(sm: sessionmaker[Session], body: CpuCreate) -> CpuRead:
    """Add a CPU.

    Raises
    ------
    app.errors.Conflict
        A CPU with the same name (case and spacing ignored) exists.
    """
    with session_scope(sm) as session:
        cpu = CpuRepository(session).add(
            name=" ".join(body.name.split()),
            score=body.score,
            source=body.source,
            source_date=body.source_date,
        )
        if cpu is None:
            raise Conflict(f"a CPU named {body.name!r} is already registered", field="name")
        return _view(cpu)
