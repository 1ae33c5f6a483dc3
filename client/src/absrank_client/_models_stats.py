"""Results of the statistical tests and of comparisons: single tests, the Friedman family,
post-hoc procedures, Bradley–Terry, and the comparison with its NIIA report (re-exported by
:mod:`absrank_client.models`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from absrank_client._models_base import (
    JSON,
    Progress,
    Row,
    ServiceWarning,
    _names,
    _Tabular,
    _warnings,
    log10_of,
    num,
)
from absrank_client.pairs import pair_names, pair_rows

# ---------------------------------------------------------------- statistical tests


@dataclass(frozen=True)
class TestResult(_Tabular):
    """A single test's answer (wilcoxon, sign, rank-sum, ks, permutation, sign-cross-machine).

    ``p_value`` and ``log10_p_value`` are the test's main p-value; ``result`` is the whole
    ``result`` object of the answer (rank-sum and ks: ``{"rank_sum"|"ks": ..., "a12": ...}``),
    ``a12`` the Vargha–Delaney effect size where the test reports it.
    """

    __test__ = False  # not a pytest class

    test: str
    statistic: float | None
    p_value: float | None
    log10_p_value: float | None
    method: str | None
    degenerate: bool
    reason: str | None
    a12: float | None
    result: JSON
    policies: JSON
    warnings: tuple[ServiceWarning, ...]
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> TestResult:
        result = raw.get("result") or {}
        main = result
        for key in ("rank_sum", "ks"):
            if isinstance(result.get(key), Mapping):
                main = result[key]
        a12 = result.get("a12")
        return cls(
            test=raw.get("test", ""),
            statistic=num(main.get("statistic")),
            p_value=main.get("p_value"),
            log10_p_value=log10_of(main, "p_value"),
            method=main.get("method"),
            degenerate=bool(main.get("degenerate", False)),
            reason=main.get("reason"),
            a12=a12.get("a12") if isinstance(a12, Mapping) else None,
            result=result,
            policies=raw.get("policies") or {},
            warnings=_warnings(raw.get("warnings")),
            raw=raw,
        )

    def rows(self) -> list[Row]:
        row: Row = {
            "test": self.test,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "log10_p_value": self.log10_p_value,
            "method": self.method,
        }
        if self.a12 is not None:
            row["a12"] = self.a12
        for key in ("p_value_corrected", "decision"):  # the cross-machine sign test
            if key in self.result:
                row[key] = self.result[key]
                if key.startswith("p_"):
                    row[f"log10_{key}"] = log10_of(self.result, key)
        if self.degenerate:
            row["reason"] = self.reason
        return [row]


@dataclass(frozen=True)
class OmnibusTest:
    """One omnibus rank test: Friedman, Iman–Davenport, aligned ranks or Quade."""

    name: str
    statistic: float | None
    df: Any
    p_value: float | None
    log10_p_value: float | None
    method: str | None

    def row(self) -> Row:
        return {
            "test": self.name,
            "statistic": self.statistic,
            "df": self.df,
            "p_value": self.p_value,
            "log10_p_value": self.log10_p_value,
            "method": self.method,
        }


def _omnibus(result: JSON) -> tuple[OmnibusTest, ...]:
    out = []
    for key, name in (
        ("friedman", "friedman"),
        ("aligned_ranks", "aligned-ranks"),
        ("quade", "quade"),
    ):
        doc = result.get(key)
        if not isinstance(doc, Mapping):
            continue
        out.append(
            OmnibusTest(
                name,
                num(doc.get("statistic")),
                doc.get("df"),
                doc.get("p_value"),
                log10_of(doc, "p_value"),
                doc.get("method"),
            )
        )
        if key == "friedman" and "iman_davenport_p_value" in doc:
            out.append(
                OmnibusTest(
                    "iman-davenport",
                    num(doc.get("iman_davenport_statistic")),
                    doc.get("iman_davenport_df"),
                    doc.get("iman_davenport_p_value"),
                    log10_of(doc, "iman_davenport_p_value"),
                    doc.get("method"),
                )
            )
    return tuple(out)


@dataclass(frozen=True)
class FriedmanTests(_Tabular):
    """Friedman (tie-corrected), Iman–Davenport, aligned ranks and Quade on one matrix."""

    algorithms: tuple[str, ...]
    average_ranks: tuple[float, ...]
    tests: tuple[OmnibusTest, ...]
    warnings: tuple[ServiceWarning, ...]
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON, algorithms: Sequence[str] | None = None) -> FriedmanTests:
        result = raw.get("result", raw)
        names = tuple(algorithms or (raw.get("policies") or {}).get("algorithms") or ())
        return cls(
            algorithms=names,
            average_ranks=tuple((result.get("friedman") or {}).get("average_ranks") or ()),
            tests=_omnibus(result),
            warnings=_warnings(raw.get("warnings")),
            raw=raw,
        )

    def test(self, name: str) -> OmnibusTest:
        """The test called ``name`` (friedman, iman-davenport, aligned-ranks, quade)."""
        for t in self.tests:
            if t.name == name:
                return t
        raise KeyError(name)

    def rows(self) -> list[Row]:
        return [t.row() for t in self.tests]


@dataclass(frozen=True)
class PosthocPair:
    """One post-hoc comparison between algorithms ``a`` and ``b`` (by name)."""

    a: str
    b: str
    rank_difference: float | None
    z: float | None
    p_value: float | None
    log10_p_value: float | None
    p_adjusted: float | None
    log10_p_adjusted: float | None
    significant: bool

    def row(self) -> Row:
        return self.__dict__.copy()


@dataclass(frozen=True)
class LowPower:
    """Too few problems for the rank post-hoc tests: the standard CD exceeds ``(k − 1) / 2``.

    Only pairs of algorithms whose average ranks differ by more than half the largest possible
    difference could be found significant; ``n_needed`` problems would bring the CD down to
    ``threshold`` (the service's docs/METHODS.md states the rule and its source).
    """

    n_problems: int
    n_algorithms: int
    alpha: float
    comparison: str
    critical_difference: float
    threshold: float
    n_needed: int
    chi2_rough: bool
    message: str

    @classmethod
    def parse(cls, doc: Any) -> LowPower | None:
        if not isinstance(doc, Mapping):
            return None
        return cls(
            n_problems=int(doc["n_problems"]),
            n_algorithms=int(doc["n_algorithms"]),
            alpha=float(doc["alpha"]),
            comparison=str(doc.get("comparison", "")),
            critical_difference=float(doc["critical_difference"]),
            threshold=float(doc["threshold"]),
            n_needed=int(doc["n_needed"]),
            chi2_rough=bool(doc.get("chi2_rough", False)),
            message=str(doc.get("message", "")),
        )


@dataclass(frozen=True)
class Posthoc(_Tabular):
    """A post-hoc procedure's answer: pairs and cliques by algorithm name.

    ``cliques`` are groups of algorithms with no significant difference among them (what a
    critical-difference diagram joins with a bar); ``control`` is a name or None.
    ``low_power`` is set when there are too few problems for the test to find differences;
    ``warnings`` are the answer's (``/v1/tests/posthoc``; a comparison's are its own).
    """

    procedure: str
    comparison: str
    alpha: float
    control: str | None
    algorithms: tuple[str, ...]
    average_ranks: tuple[float, ...]
    critical_difference: float | None
    pairs: tuple[PosthocPair, ...]
    cliques: tuple[tuple[str, ...], ...]
    low_power: LowPower | None
    warnings: tuple[ServiceWarning, ...]
    raw: JSON = field(repr=False)
    cd_convention: str = "standard"
    """The critical difference's convention: ``standard`` (Demšar 2006) or ``jing-liu``
    (Jing & Liu's Table I: z at 1 − α/(2k))."""

    @classmethod
    def parse(cls, doc: JSON, algorithms: Sequence[str]) -> Posthoc:
        names = tuple(algorithms)
        control = doc.get("control")
        pairs = []
        for p in pair_rows(doc.get("pairs")):
            a, b = pair_names(names, p)
            pairs.append(
                PosthocPair(
                    a=a,
                    b=b,
                    rank_difference=p.get("rank_difference"),
                    z=num(p.get("z")),
                    p_value=p.get("p_value"),
                    log10_p_value=log10_of(p, "p_value"),
                    p_adjusted=p.get("p_adjusted"),
                    log10_p_adjusted=log10_of(p, "p_adjusted"),
                    significant=bool(p.get("significant", False)),
                )
            )
        return cls(
            procedure=doc.get("procedure", ""),
            comparison=doc.get("comparison", ""),
            alpha=float(doc.get("alpha", 0.05)),
            control=names[control] if isinstance(control, int) else control,
            algorithms=names,
            average_ranks=tuple(doc.get("average_ranks") or ()),
            critical_difference=doc.get("critical_difference"),
            pairs=tuple(pairs),
            cliques=tuple(_names(names, c) for c in doc.get("cliques") or ()),
            low_power=LowPower.parse(doc.get("low_power")),
            warnings=(),
            raw=doc,
            cd_convention=str(doc.get("cd_convention") or "standard"),
        )

    def rows(self) -> list[Row]:
        return [p.row() for p in self.pairs]


@dataclass(frozen=True)
class BradleyTerry(_Tabular):
    """Bradley–Terry strengths by algorithm (``inf`` never loses, 0 never wins)."""

    algorithms: tuple[str, ...]
    strengths: tuple[float, ...]
    components: tuple[tuple[str, ...], ...]
    degenerate: bool
    reason: str | None
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, model: JSON, algorithms: Sequence[str], raw: JSON | None = None) -> BradleyTerry:
        names = tuple(algorithms)
        return cls(
            algorithms=names,
            strengths=tuple(num(s) for s in model.get("strengths") or ()),
            components=tuple(_names(names, c) for c in model.get("components") or ()),
            degenerate=bool(model.get("degenerate", False)),
            reason=model.get("reason"),
            raw=raw if raw is not None else model,
        )

    def rows(self) -> list[Row]:
        return [
            {"algorithm": a, "strength": s}
            for a, s in zip(self.algorithms, self.strengths, strict=False)
        ]


# ---------------------------------------------------------------- comparisons


@dataclass(frozen=True)
class AlgorithmSummary:
    """One algorithm of a comparison: relative and absolute figures side by side."""

    algorithm: str
    average_rank: float | None
    average_absolute_rank: float | None
    mean_log10_v: float | None
    strength: float | None

    def row(self) -> Row:
        return self.__dict__.copy()


@dataclass(frozen=True)
class AbsolutePair:
    """Wilcoxon and sign tests of two algorithms' absolute ranks over the problems."""

    a: str
    b: str
    wilcoxon_p: float | None
    log10_wilcoxon_p: float | None
    sign_p: float | None
    log10_sign_p: float | None
    p_adjusted: float | None
    log10_p_adjusted: float | None
    significant: bool

    def row(self) -> Row:
        return self.__dict__.copy()


@dataclass(frozen=True)
class Flip:
    """A conclusion about the pair ``a``, ``b`` that changes when only ``subset`` is compared."""

    scale: str  # "relative" or "absolute"
    subset: tuple[str, ...]
    a: str
    b: str
    kinds: tuple[str, ...]  # "order" and/or "significance"

    def row(self) -> Row:
        return {
            "scale": self.scale,
            "a": self.a,
            "b": self.b,
            "kinds": ",".join(self.kinds),
            "subset": ",".join(self.subset),
        }


@dataclass(frozen=True)
class PendingTable:
    """A table (or ladder level) a partial comparison waits for."""

    problem: str
    location: str | None
    status: str | None
    progress: Progress | None
    eta_seconds: float | None


def _flips(scale: str, doc: JSON, algorithms: Sequence[str]) -> tuple[Flip, ...]:
    out = []
    for sub in doc.get("subsets") or ():
        subset = tuple(str(s) for s in sub.get("subset") or ())
        for flip in sub.get("flips") or ():
            pair = flip.get("pair") or ()
            a, b = _names(algorithms, pair) if len(pair) == 2 else pair_names(algorithms, flip)
            out.append(Flip(scale, subset, a, b, tuple(flip.get("kinds") or ())))
    return tuple(out)


def _flipped_pairs(doc: JSON, algorithms: Sequence[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for pair in doc.get("flipped_pairs") or ():
        a, b = _names(algorithms, pair)
        out.append((a, b))
    return tuple(out)


@dataclass(frozen=True)
class Comparison(_Tabular):
    """A comparison (``POST /v1/comparisons``): relative and absolute ranks and the NIIA report.

    ``summary`` has one :class:`AlgorithmSummary` per algorithm (``to_frame()`` is that table).
    ``status`` is ``partial`` while tables build (``absolute_status`` ``pending``, ``pending``
    lists them); the client waits for them unless told not to.
    """

    id: str
    location: str
    status: str
    algorithms: tuple[str, ...]
    problems: tuple[str, ...]
    summary: tuple[AlgorithmSummary, ...]
    omnibus: tuple[OmnibusTest, ...]
    posthoc: Posthoc | None
    absolute_status: str | None
    pending: tuple[PendingTable, ...]
    absolute_pairs: tuple[AbsolutePair, ...]
    niia_status: str | None
    flips: tuple[Flip, ...]
    relative_flipped_pairs: tuple[tuple[str, str], ...]
    absolute_flipped_pairs: tuple[tuple[str, str], ...]
    warnings: tuple[ServiceWarning, ...]
    absolute_regions: JSON
    """With ``tables`` given: problem → the region its ranks are relative to (``region``
    ``box`` with ``delta``, ``lower``, ``upper``, or ``domain``); empty otherwise."""
    raw: JSON = field(repr=False)

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @property
    def friedman(self) -> OmnibusTest | None:
        """The Friedman test of the relative ranks."""
        return next((t for t in self.omnibus if t.name == "friedman"), None)

    @classmethod
    def parse(cls, raw: JSON) -> Comparison:
        names = tuple(raw.get("algorithms") or ())
        relative = raw.get("relative") or {}
        absolute = raw.get("absolute") or {}
        niia = raw.get("niia") or {}
        k = len(names)

        def column(doc: JSON, key: str) -> list[Any]:
            values = doc.get(key)
            return [num(x) for x in values] if isinstance(values, list) else [None] * k

        avg = column(relative, "average_ranks")
        abs_avg = column(absolute, "average_absolute_rank")
        mean_log = column(absolute, "mean_log10_v")
        strengths = column(relative.get("bradley_terry") or {}, "strengths")
        summary = tuple(
            AlgorithmSummary(n, avg[i], abs_avg[i], mean_log[i], strengths[i])
            for i, n in enumerate(names)
        )
        posthoc = relative.get("posthoc")
        pairs = []
        for p in pair_rows(absolute.get("pairwise")):
            a, b = pair_names(names, p)
            w, s = p.get("wilcoxon") or {}, p.get("sign_test") or {}
            pairs.append(
                AbsolutePair(
                    a,
                    b,
                    w.get("p_value"),
                    log10_of(w, "p_value"),
                    s.get("p_value"),
                    log10_of(s, "p_value"),
                    p.get("p_adjusted"),
                    log10_of(p, "p_adjusted"),
                    bool(p.get("significant", False)),
                )
            )
        pending = tuple(
            PendingTable(
                problem=str(p.get("problem", "")),
                location=p.get("location"),
                status=p.get("table_status"),
                progress=Progress.parse(p.get("progress")),
                eta_seconds=p.get("eta_seconds"),
            )
            for p in absolute.get("pending") or ()
        )
        rel_niia, abs_niia = niia.get("relative") or {}, niia.get("absolute") or {}
        return cls(
            id=raw.get("id", ""),
            location=raw.get("location", ""),
            status=raw.get("status", ""),
            algorithms=names,
            problems=tuple(raw.get("problems") or ()),
            summary=summary,
            omnibus=_omnibus(relative),
            posthoc=Posthoc.parse(posthoc, names) if isinstance(posthoc, Mapping) else None,
            absolute_status=absolute.get("status"),
            pending=pending,
            absolute_pairs=tuple(pairs),
            niia_status=niia.get("status"),
            flips=_flips("relative", rel_niia, names) + _flips("absolute", abs_niia, names),
            relative_flipped_pairs=_flipped_pairs(rel_niia, names),
            absolute_flipped_pairs=_flipped_pairs(abs_niia, names),
            warnings=_warnings(raw.get("warnings"), absolute.get("warnings")),
            absolute_regions=dict(absolute.get("regions") or {}),
            raw=raw,
        )

    def rows(self) -> list[Row]:
        return [s.row() for s in self.summary]
