"""Schemas of the cross-machine endpoints: equivalent runtime, corrected sign test."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from app.schemas.common import STRICT_REQUEST, FiniteFloat, field_error
from app.schemas.cpus import CpuName
from app.schemas.stattests import NAME, Number

OneOrMany = Annotated[
    Annotated[FiniteFloat, Tag("<number>")] | Annotated[list[FiniteFloat], Tag("<list>")],
    Discriminator(lambda v: "<list>" if isinstance(v, list) else "<number>"),
]
"""One number or a list of numbers; errors name ``t1`` or ``t1.3`` (tags in ``<>`` are dropped
from error locations)."""

PGamma = Annotated[
    float,
    Field(
        gt=0.0,
        le=0.5,
        allow_inf_nan=False,
        description="tolerated probability that an equivalent runtime is LONGER than the true "
        "one; 0.5 = the unbiased estimate (γ = 1). The runtime estimate accepts "
        "[0.0002790178571429047, 0.5] (the calibration table); the sign test any (0, 0.5]",
    ),
]
Score = Annotated[
    float,
    Field(gt=0.0, allow_inf_nan=False, description="PassMark single-thread score (< 3223.49)"),
]


class Machines(BaseModel):
    """Two machines, each by score or by a registered CPU name (exactly one of each pair)."""

    model_config = STRICT_REQUEST
    s1: Score | None = Field(None, description="score of M1, the machine of the published runs")
    cpu1: CpuName | None = Field(None, description="M1 by name (GET /v1/cpus?q=...)")
    s2: Score | None = Field(None, description="score of M2, the machine that runs B")
    cpu2: CpuName | None = Field(None, description="M2 by name")

    @model_validator(mode="after")
    def _one_of_each(self) -> Machines:
        for s, cpu in (("s1", "cpu1"), ("s2", "cpu2")):
            if (getattr(self, s) is None) == (getattr(self, cpu) is None):
                raise field_error(s, f"give exactly one of {s} (a score) and {cpu} (a CPU name)")
        return self


class EquivalentRuntimeRequest(Machines):
    """Runtimes on M1 to convert into equivalent runtimes on M2 (Arza et al. 2024)."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                {"t1": 15.0, "s1": 1540, "s2": 1643, "p_gamma": 0.1},
                {"t1": [10, 60, 300], "cpu1": "Intel Xeon E5440", "cpu2": "AMD Ryzen 7 1800X"},
            ]
        }
    )
    t1: OneOrMany = Field(description="runtime(s) on M1 (any time unit, > 0): one number or a list")
    p_gamma: PGamma = 0.5


class CpuEntry(BaseModel):
    """The registry entry a machine was named by (as it was when used)."""

    id: int
    name: str
    score: float
    source: str
    source_date: str
    created_at: str = Field(description="when the entry was registered (ISO 8601)")


class EquivalentRuntimeResponse(BaseModel):
    """Equivalent runtime(s) on M2, with the model's inputs, warnings and provenance."""

    t2: float | list[float]
    t1: float | list[float]
    gamma: float
    p_gamma: float
    alpha: float = Field(description="the model's constant α = 3223.49")
    ratio: float = Field(description="(α − s2)/(α − s1)")
    s1: float
    s2: float
    cpu1: CpuEntry | None
    cpu2: CpuEntry | None
    warnings: list[str]
    limits: str
    provenance: dict[str, Any]


class CrossMachineSignRequest(BaseModel):
    """One-sided sign test of "B better than A" across machines, corrected for p_γ."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                {"n": 20, "k": 3, "p_gamma": 0.1},
                {"a": [0.5, 1.2, 3.3, 0.8], "b": [0.4, 1.0, 3.3, 0.7], "p_gamma": 0.1},
            ]
        }
    )
    a: list[FiniteFloat] | None = Field(
        None, description="A's published results per instance (minimization)"
    )
    b: list[FiniteFloat] | None = Field(
        None, description="B's results per instance, run for the equivalent runtimes"
    )
    n: int | None = Field(None, ge=1, le=10**6, description="or: number of non-tied instances")
    k: int | None = Field(None, ge=0, le=10**6, description="and: instances where A is better")
    p_gamma: PGamma
    alpha: float = Field(0.05, gt=0.0, lt=1.0, description="significance level")
    rtol: float = Field(
        0.0, ge=0.0, le=1e-3, allow_inf_nan=False, description="relative tolerance of a tie"
    )


class PublishedRow(BaseModel):
    """One instance of A's published table."""

    model_config = STRICT_REQUEST
    instance: NAME
    a: FiniteFloat = Field(description="A's published result (minimization)")
    t1: FiniteFloat = Field(gt=0, description="the runtime A used on M1 (any time unit)")


class CrossMachineCreate(Machines):
    """Steps 1–2 of the paper's procedure: A's published table, the two machines and p_γ."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "published": [
                        {"instance": "tai20_5_0", "a": 1278, "t1": 12.0},
                        {"instance": "tai20_5_1", "a": 1359, "t1": 12.0},
                        {"instance": "tai20_5_2", "a": 1081, "t1": 12.0},
                    ],
                    "cpu1": "Intel Xeon E5440",
                    "s2": 1921,
                    "p_gamma": 0.1,
                }
            ]
        }
    )
    published: list[PublishedRow] = Field(min_length=1, description="A's published table")
    p_gamma: PGamma = 0.1
    alpha: float = Field(0.05, gt=0.0, lt=1.0, description="significance level of the test")
    rtol: float = Field(
        0.0, ge=0.0, le=1e-3, allow_inf_nan=False, description="relative tolerance of a tie"
    )


class ResultRow(BaseModel):
    """B's result on one instance, run for that instance's equivalent runtime."""

    model_config = STRICT_REQUEST
    instance: NAME
    b: FiniteFloat


class CrossMachineResults(BaseModel):
    """Steps 3–5: B's results on every instance of the published table."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "results": [
                        {"instance": "tai20_5_0", "b": 1297},
                        {"instance": "tai20_5_1", "b": 1359},
                        {"instance": "tai20_5_2", "b": 1080},
                    ]
                }
            ]
        }
    )
    results: list[ResultRow] = Field(min_length=1)


class MachinesRead(BaseModel):
    """The scores used for M1 and M2, and the registry entries they came from (or null)."""

    s1: float
    s2: float
    cpu1: CpuEntry | None
    cpu2: CpuEntry | None


class RuntimeRow(BaseModel):
    """One instance: A's result, its runtime on M1 and the equivalent runtime t2 for B on M2."""

    instance: str
    a: float
    t1: float
    t2: float


class InstanceResult(BaseModel):
    """B's result on one instance (run for t2)."""

    instance: str
    b: float


class CorrectedSignTestRead(BaseModel):
    """The one-sided sign test of "B better than A", corrected for p_gamma."""

    model_config = ConfigDict(extra="allow")
    n: int
    k: int
    n_ties: int
    p_value: float
    p_value_corrected: float
    log10_p_value: Number
    log10_p_value_corrected: Number
    p_gamma: float
    alpha: float
    decision: str
    caveat: str
    degenerate: bool
    reason: str | None
    method: str


class CrossMachineRead(BaseModel):
    """The paper's five steps as one resource: runtimes for B, then the corrected test."""

    model_config = ConfigDict(extra="allow")
    id: str
    location: str
    status: str = Field(description="awaiting-results | complete")
    steps: list[str]
    machines: MachinesRead
    p_gamma: float
    alpha: float = Field(description="significance level of the corrected sign test")
    rtol: float = Field(description="relative tolerance under which B and A tie")
    gamma: float
    ratio: float = Field(description="s2 / s1, the machines' score ratio")
    runtimes: list[RuntimeRow] = Field(description="per instance: a, t1 and t2 for B")
    warnings: list[str]
    limits: str = Field(description="what the procedure can and cannot conclude")
    results: list[InstanceResult] | None = Field(
        description="B's results per instance, once submitted (null before)"
    )
    test: CorrectedSignTestRead | None
    provenance: dict[str, Any]
