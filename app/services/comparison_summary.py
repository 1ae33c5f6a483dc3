"""A comparison's written summary (autorank-style, honest about NIIA), as text or Markdown.

:func:`summarize` reads a stored comparison's answer into a :class:`Summary` (frozen: the
sentences, each with the numbers it quotes taken from the answer), and :func:`render` writes it
as plain text or Markdown. The rules (docs/METHODS.md, "Written summary"): say the tests used
and why (rank tests: no normality or equal-variance assumption, so none is checked), N, k and
alpha; the omnibus's verdict; the post-hoc's significant pairs (or that there are none, and the
low-power rule when it applies); the relative conclusions that flip when the set of algorithms
changes (the NIIA report); and what the absolute ranks support, whose order never depends on the
set compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from app.services.paper_tables import pair_significance

FORMATS: Final = ("text", "markdown")
MEDIA_TYPES: Final = {"text": "text/plain", "markdown": "text/markdown"}


@dataclass(frozen=True)
class Summary:
    """The summary of one comparison.

    Attributes
    ----------
    title : str
        The comparison's id and size.
    sentences : tuple of str
        The paragraph, one sentence each (numbers as ``%.4g``).
    provenance : str
        Which answer it summarizes.
    """

    title: str
    sentences: tuple[str, ...]
    provenance: str


def _g(x: Any) -> str:
    return f"{float(x):.4g}"


def _names(pairs: Sequence[Sequence[str]]) -> str:
    return ", ".join(f"{a} vs {b}" for a, b in pairs)


def _significant_pairs(family: Mapping[str, Any], names: Sequence[str]) -> list[tuple[str, str]]:
    return [(names[i], names[j]) for i, j, sig in pair_significance(family, len(names)) if sig]


def _relative(answer: Mapping[str, Any]) -> list[str]:
    names = answer["algorithms"]
    rel = answer["relative"]
    fr, post = rel["friedman"], rel["posthoc"]
    alpha = post["alpha"]
    def verdict(p: float) -> str:
        return "rejects" if p < alpha else "does not reject"

    if fr.get("degenerate"):
        # perfect concordance (F = inf, p = 0) or every problem tying all algorithms (F = 0,
        # p = 1): the F approximation says nothing there, Friedman's decision stands
        iman = (
            f"; Iman–Davenport's F is not informative here ({fr.get('reason') or 'degenerate'}): "
            "the Friedman test's decision stands"
        )
    else:
        iman = (
            f", and Iman–Davenport's F (F = {_g(fr['iman_davenport_statistic'])}, "
            f"p = {_g(fr['iman_davenport_p_value'])}) "
            + verdict(float(fr["iman_davenport_p_value"]))
            + " them"
        )
    out = [
        f"The {len(names)} algorithms were compared on N = {len(answer['problems'])} problems "
        f"(k = {len(names)}, alpha = {alpha}) with rank tests, which assume neither normality "
        "nor equal variances, so none was checked (Demšar 2006): the Friedman test "
        f"(chi2 = {_g(fr['statistic'])}, df = {fr['df']}, p = {_g(fr['p_value'])}) "
        + verdict(float(fr["p_value"]))
        + f" equal average ranks{iman}."
    ]
    ranks = rel["average_ranks"]
    order = sorted(range(len(names)), key=lambda i: (ranks[i], i))
    out.append(
        "Average ranks (lower is better): "
        + ", ".join(f"{names[i]} {_g(ranks[i])}" for i in order)
        + "."
    )
    sig = _significant_pairs(post["pairs"], names)
    cd = post.get("critical_difference")
    cd_text = f", CD = {_g(cd)}" if isinstance(cd, int | float) else ""
    out.append(
        f"The {post['procedure']} post-hoc ({post['comparison']}{cd_text}) finds "
        + (f"significant differences between {_names(sig)}." if sig else "no significant pair.")
    )
    if post.get("low_power"):
        lp = post["low_power"]
        out.append(
            f"N is too small for these tests to mean much: the standard CD "
            f"{_g(lp['critical_difference'])} exceeds (k − 1)/2 = {_g(lp['threshold'])}; "
            f"N >= {lp['n_needed']} problems are needed."
        )
    return out


def _niia(answer: Mapping[str, Any]) -> list[str]:
    niia = answer["niia"]
    if niia.get("status") != "complete":
        return [f"The NIIA report was not computed ({niia.get('reason') or niia['status']})."]
    rel = (niia.get("relative") or {}).get("flipped_pairs") or []
    out = [
        f"Compared in subsets ({niia.get('subsets')}), "
        + (
            f"the relative-rank conclusions on {_names(rel)} flip: they depend on which "
            "algorithms are compared (NIIA) and should not be reported as properties of the pair."
            if rel
            else "no relative-rank conclusion flips."
        )
    ]
    return out


def _absolute(answer: Mapping[str, Any]) -> list[str]:
    ab = answer["absolute"]
    if ab.get("status") != "complete":
        return [
            f"Absolute ranks are {ab.get('status')}"
            + (f": {ab['reason']}." if ab.get("reason") else ".")
        ]
    names = answer["algorithms"]
    mean = ab["mean_log10_v"]
    order = sorted(
        (i for i in range(len(names)) if mean[i] is not None), key=lambda i: (mean[i], i)
    )
    out = [
        "Absolute ranks, which depend on no other algorithm, order them by mean log10 v: "
        + ", ".join(f"{names[i]} {_g(mean[i])}" for i in order)
        + "."
    ]
    if ab.get("pairwise") is not None:
        sig = _significant_pairs(ab["pairwise"], names)
        out.append(
            f"Paired Wilcoxon tests on v ({ab['pairwise']['adjustment']}-adjusted) find "
            + (f"significant differences between {_names(sig)}." if sig else "no significant pair.")
        )
    flips = (answer["niia"].get("absolute") or {}).get("flipped_pairs") or []
    rel = (answer["niia"].get("relative") or {}).get("flipped_pairs") or []
    if rel:
        supported = [
            (a, b)
            for a, b in rel
            if None not in (mean[names.index(a)], mean[names.index(b)])
            and mean[names.index(a)] != mean[names.index(b)]
        ]
        out.append(
            "For the flipped pairs the absolute ranks give one order whatever is compared: "
            + ", ".join(
                f"{a} {'before' if mean[names.index(a)] < mean[names.index(b)] else 'after'} {b}"
                for a, b in supported
            )
            + "."
        )
    if flips:
        out.append(
            f"Only the significance of {_names(flips)} changes with the post-hoc family's size."
        )
    return out


def summarize(answer: Mapping[str, Any]) -> Summary:
    """The summary of a comparison's answer (either view)."""
    title = (
        f"Comparison {answer['id']}: {len(answer['algorithms'])} algorithms on "
        f"{len(answer['problems'])} problems"
    )
    sentences = (*_relative(answer), *_niia(answer), *_absolute(answer))
    prov = answer.get("provenance", {})
    provenance = (
        f"absrank {prov.get('service_version', '')} comparison {answer['id']} "
        f"request_sha256 {prov.get('request_sha256', '')}"
    )
    return Summary(title, tuple(sentences), provenance)


def render(summary: Summary, fmt: str) -> bytes:
    """``summary`` as plain text (title line, blank line, paragraph) or Markdown (a heading)."""
    paragraph = " ".join(summary.sentences)
    if fmt == "markdown":
        text = f"<!-- provenance: {summary.provenance} -->\n## {summary.title}\n\n{paragraph}\n"
    else:
        text = f"{summary.title}\n\n{paragraph}\n"
    return text.encode()
