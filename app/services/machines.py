"""Use cases of fair comparison across machines (Arza, Ceberio, Irurozki, Pérez 2024).

``POST /v1/equivalent-runtime`` converts runtimes between machines; ``POST
/v1/tests/sign-cross-machine`` runs the corrected one-sided sign test; ``/v1/cross-machine-
comparisons`` walks the paper's five steps as one resource: (1) choose p_γ, (2) compute the
equivalent runtimes on M2 for each instance of A's published table, (3) run B for those
runtimes, (4) the corrected sign test on A's and B's results, (5) the one-sided conclusion.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.domain import machines
from app.errors import Conflict, InvalidInput, NotFound
from app.repositories.crossmachine import CrossMachineRepository
from app.schemas.machines import (
    CrossMachineCreate,
    CrossMachineResults,
    CrossMachineSignRequest,
    EquivalentRuntimeRequest,
    EquivalentRuntimeResponse,
    Machines,
)
from app.services.cpus import find_cpu
from app.services.errors import domain_errors_as_problems
from app.services.provenance import canonical_sha256, provenance
from app.services.serialize import jsonable
from app.services.stored import Stored

LIMITS = (
    "Arza et al.'s model holds for single-thread, CPU-bound code: t ∝ (α − s) with the PassMark "
    "single-thread score s, fitted on 8 machines with scores 539–2185 (outside that range the "
    "runtime is extrapolated); only the one-sided conclusion 'B is better than A' can be drawn."
)
STEPS = [
    "1. choose p_gamma, the tolerated probability that an equivalent runtime is too long",
    "2. equivalent runtimes t2 on M2 for each instance of A's published table (runtimes)",
    "3. run B on M2 for t2 on each instance",
    "4. POST B's results to {location}/results: the corrected one-sided sign test",
    "5. conclude only 'B is significantly better than A' or 'no evidence that B is better'",
]
MAX_INSTANCES = 100_000


def _machine(
    sm: sessionmaker[Session], score: float | None, cpu: str | None, which: str
) -> tuple[float, dict[str, Any] | None]:
    """(score, registry entry or None) of machine ``which`` ("1" or "2")."""
    if cpu is None:
        assert score is not None
        return score, None
    entry = find_cpu(sm, cpu, field=f"cpu{which}").model_dump(
        mode="json", exclude={"match", "warnings"}
    )
    if not 0.0 < entry["score"] < machines.ALPHA:
        raise InvalidInput(
            f"{entry['name']} scores {entry['score']:g}, not below α = {machines.ALPHA}: the "
            "runtime model of Arza et al. does not cover this machine",
            field=f"cpu{which}",
        )
    return float(entry["score"]), entry


def _machines(sm: sessionmaker[Session], body: Machines) -> dict[str, Any]:
    s1, cpu1 = _machine(sm, body.s1, body.cpu1, "1")
    s2, cpu2 = _machine(sm, body.s2, body.cpu2, "2")
    return {"s1": s1, "s2": s2, "cpu1": cpu1, "cpu2": cpu2}


def equivalent_runtime(
    sm: sessionmaker[Session], body: EquivalentRuntimeRequest
) -> EquivalentRuntimeResponse:
    """Equivalent runtime(s) on M2 of runtime(s) ``t1`` on M1.

    Raises
    ------
    app.errors.NotFound
        An unknown CPU name (``cpu1``/``cpu2``).
    app.errors.InvalidInput
        A runtime <= 0, a score outside (0, α), ``p_gamma`` outside the calibration table's
        range, too many runtimes; the field is named.
    """
    if isinstance(body.t1, list) and len(body.t1) > MAX_INSTANCES:
        raise InvalidInput(f"at most {MAX_INSTANCES} runtimes", field="t1")
    m = _machines(sm, body)
    with domain_errors_as_problems("t1"):
        res = machines.equivalent_runtime(body.t1, m["s1"], m["s2"], p_gamma=body.p_gamma)
    return EquivalentRuntimeResponse(
        t2=jsonable(res.t2),
        t1=body.t1,
        gamma=res.gamma,
        p_gamma=res.p_gamma,
        alpha=res.alpha,
        ratio=res.ratio,
        s1=res.s1,
        s2=res.s2,
        cpu1=m["cpu1"],
        cpu2=m["cpu2"],
        warnings=list(res.warnings),
        limits=LIMITS,
        provenance=provenance(body.model_dump(mode="json"), machines=_scores(m)),
    )


def _scores(m: dict[str, Any]) -> dict[str, Any]:
    """The scores actually used (a registry entry can be added later, never changed)."""
    return {"s1": m["s1"], "s2": m["s2"]}


def sign_cross_machine(body: CrossMachineSignRequest) -> dict[str, Any]:
    """Corrected one-sided sign test (paired ``a``/``b`` or ``n``/``k``).

    Raises
    ------
    app.errors.InvalidInput
        Inconsistent inputs, lengths that differ, ``k > n``; the field is named.
    """
    for name in ("a", "b"):
        values = getattr(body, name)
        if values is not None and len(values) > MAX_INSTANCES:
            raise InvalidInput(f"at most {MAX_INSTANCES} instances", field=name)
    with domain_errors_as_problems("a"):
        res = machines.corrected_sign_test(
            body.a,
            body.b,
            n=body.n,
            k=body.k,
            p_gamma=body.p_gamma,
            rtol=body.rtol,
            alpha=body.alpha,
        )
    # a dict in TestResponse's shape: app.api.stattests.ANSWERED_EXAMPLES embeds it in the
    # OpenAPI document as JSON
    return {
        "test": "sign-cross-machine",
        "result": jsonable(res),
        "policies": {"rtol": body.rtol, "ties": "removed and counted (n_ties)"},
        "warnings": [],
        "provenance": provenance(body.model_dump(mode="json"), test="sign-cross-machine"),
    }


# ---------------------------------------------------------------------------------------------
# the guided resource


def _location(cid: str) -> str:
    return f"/v1/cross-machine-comparisons/{cid}"


def _setup_answer(
    sm: sessionmaker[Session], body: CrossMachineCreate
) -> tuple[dict[str, Any], dict[str, Any]]:
    if len(body.published) > MAX_INSTANCES:
        raise InvalidInput(f"at most {MAX_INSTANCES} instances", field="published")
    names = [r.instance for r in body.published]
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise InvalidInput(f"instance {name!r} appears twice", field=f"published.{i}.instance")
        seen.add(name)
    m = _machines(sm, body)
    t1 = np.array([r.t1 for r in body.published])
    with domain_errors_as_problems("published"):
        res = machines.equivalent_runtime(t1, m["s1"], m["s2"], p_gamma=body.p_gamma)
    # the setup (and so the id) holds the scores used, however the machines were named
    setup = body.model_dump(mode="json", exclude={"s1", "cpu1", "s2", "cpu2"}) | {
        "machines": _scores(m)
    }
    answer = {
        "machines": m,
        "gamma": res.gamma,
        "ratio": res.ratio,
        "runtimes": [
            {"instance": r.instance, "a": r.a, "t1": r.t1, "t2": float(t2)}
            for r, t2 in zip(body.published, np.atleast_1d(res.t2), strict=True)
        ],
        "warnings": list(res.warnings),
    }
    return setup, answer


def _read(row: Any) -> dict[str, Any]:
    location = _location(row.id)
    return {
        "id": row.id,
        "location": location,
        "status": row.status,
        "steps": [s.format(location=location) for s in STEPS],
        "machines": row.answer["machines"],
        "p_gamma": row.setup["p_gamma"],
        "alpha": row.setup["alpha"],
        "rtol": row.setup["rtol"],
        "gamma": row.answer["gamma"],
        "ratio": row.answer["ratio"],
        "runtimes": row.answer["runtimes"],
        "warnings": row.answer["warnings"],
        "limits": LIMITS,
        "results": None if row.results is None else row.results["results"],
        "test": None if row.results is None else row.results["test"],
        "provenance": provenance(row.setup, comparison_id=row.id),
    }


def create(sm: sessionmaker[Session], body: CrossMachineCreate) -> Stored:
    """Steps 1–2: store the setup and return the equivalent runtimes for B.

    Returns
    -------
    comparison : dict
        The body of :class:`app.schemas.machines.CrossMachineRead`.
    created : bool
        ``False`` when the same setup exists (it is returned as it is).

    Raises
    ------
    app.errors.NotFound
        An unknown CPU name.
    app.errors.InvalidInput
        Duplicate instances, bad runtimes, scores or p_gamma; the field is named.
    """
    setup, answer = _setup_answer(sm, body)
    digest = canonical_sha256(setup)
    cid = "x" + digest[:23]
    with session_scope(sm) as session:
        repo = CrossMachineRepository(session)
        created = repo.add(cid=cid, setup_sha256=digest, setup=setup, answer=answer)
        row = repo.get(cid)
        assert row is not None
        return Stored(_read(row), created)


def get(sm: sessionmaker[Session], cid: str) -> dict[str, Any]:
    """A guided comparison.

    Raises
    ------
    app.errors.NotFound
        No such id.
    """
    with session_scope(sm) as session:
        row = CrossMachineRepository(session).get(cid)
        if row is None:
            raise NotFound(
                f"no cross-machine comparison with id {cid[:40]!r}", field="comparison_id"
            )
        return _read(row)


def _paired(runtimes: list[dict[str, Any]], body: CrossMachineResults) -> list[float]:
    expected = [r["instance"] for r in runtimes]
    given: dict[str, float] = {}
    for i, row in enumerate(body.results):
        if row.instance not in expected:
            raise InvalidInput(
                f"instance {row.instance!r} is not in the published table",
                field=f"results.{i}.instance",
            )
        if row.instance in given:
            raise InvalidInput(
                f"instance {row.instance!r} appears twice", field=f"results.{i}.instance"
            )
        given[row.instance] = row.b
    missing = [name for name in expected if name not in given]
    if missing:
        raise InvalidInput(
            f"B's results lack {len(missing)} instance(s) of the published table "
            f"(first: {missing[0]!r}); the test pairs every instance",
            field="results",
        )
    return [given[name] for name in expected]


def submit_results(sm: sessionmaker[Session], cid: str, body: CrossMachineResults) -> Stored:
    """Steps 3–5: B's results → the corrected one-sided sign test, stored once.

    Returns
    -------
    comparison : dict
        The completed resource.
    created : bool
        ``False`` when the identical results were submitted before.

    Raises
    ------
    app.errors.NotFound
        No such id.
    app.errors.InvalidInput
        Results that do not pair with the published table (unknown, repeated or missing
        instances).
    app.errors.Conflict
        Different results were already submitted for this comparison.
    """
    current = get(sm, cid)
    b = _paired(current["runtimes"], body)
    a = [r["a"] for r in current["runtimes"]]
    results = [
        {"instance": r["instance"], "b": v} for r, v in zip(current["runtimes"], b, strict=True)
    ]
    if current["status"] == "complete":
        if current["results"] == results:
            return Stored(current, False)
        raise Conflict(
            "B's results for this comparison were already submitted and differ; results are "
            "final (start a new comparison, e.g. with another p_gamma)",
            field="results",
        )
    with domain_errors_as_problems("results"):
        test = machines.corrected_sign_test(
            a, b, p_gamma=current["p_gamma"], rtol=current["rtol"], alpha=current["alpha"]
        )
    with session_scope(sm) as session:
        CrossMachineRepository(session).complete(cid, {"results": results, "test": jsonable(test)})
    return Stored(get(sm, cid), True)
