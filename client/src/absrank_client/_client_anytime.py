"""Client methods of anytime analysis: runtime distributions and profiles, as data and figures
(mixed into :class:`absrank_client.Client`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from absrank_client._client_base import _Session
from absrank_client._models_anytime import Profiles, RuntimeDistributions

__all__ = ["AnytimeMethods", "trajectory_run"]


def trajectory_run(
    function_id: str,
    evaluations: Sequence[int],
    values: Sequence[float],
    *,
    budget: int | None = None,
) -> dict[str, Any]:
    """One run of ``algorithms``: its records ``(evaluations, value)`` on a function."""
    out: dict[str, Any] = {
        "function_id": function_id,
        "evaluations": [int(e) for e in evaluations],
        "values": [float(v) for v in values],
    }
    if budget is not None:
        out["budget"] = int(budget)
    return out


class AnytimeMethods(_Session):
    """``POST /v1/runtime-distributions`` and ``POST /v1/profiles`` (and their figures)."""

    @staticmethod
    def _runtime_body(
        algorithms: Mapping[str, Sequence[Mapping[str, Any]]] | None,
        result_sets: Sequence[str] | None,
        options: Mapping[str, Any],
    ) -> dict[str, Any]:
        body: dict[str, Any] = {k: v for k, v in options.items() if v is not None}
        if algorithms is not None:
            body["algorithms"] = [
                {"algorithm": name, "runs": [dict(r) for r in runs]}
                for name, runs in algorithms.items()
            ]
        if result_sets is not None:
            body["result_sets"] = list(result_sets)
        return body

    def runtime_distributions(
        self,
        algorithms: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
        *,
        result_sets: Sequence[str] | None = None,
        targets: Sequence[float] | None = None,
        budgets: Sequence[int] | None = None,
        function_ids: Sequence[str] | None = None,
        values_are: Literal["error", "f"] | None = None,
        records: Literal["best-so-far", "observed"] | None = None,
        pool_instances: bool | None = None,
        simulated_restarts: int | None = None,
        seed: int | None = None,
        absolute_ranks: bool | None = None,
    ) -> RuntimeDistributions:
        """ERT, runtime ECDFs, fixed budgets and the anytime absolute rank of trajectories.

        ``algorithms`` maps a name to its runs (:func:`trajectory_run` dicts); or give archived
        ``result_sets``. Options as the endpoint documents them (``None``: its default).
        """
        options = {
            "targets": None if targets is None else [float(t) for t in targets],
            "budgets": None if budgets is None else [int(b) for b in budgets],
            "function_ids": None if function_ids is None else list(function_ids),
            "values_are": values_are,
            "records": records,
            "pool_instances": pool_instances,
            "simulated_restarts": simulated_restarts,
            "seed": seed,
            "absolute_ranks": absolute_ranks,
        }
        body = self._runtime_body(algorithms, result_sets, options)
        return RuntimeDistributions.parse(self._post("/v1/runtime-distributions", body), body)

    def runtime_plot(
        self,
        body: Mapping[str, Any] | RuntimeDistributions,
        *,
        figure: Literal["ecdf", "fixed-budget", "anytime-rank"] = "ecdf",
        format: Literal["svg", "pdf", "png"] = "svg",
        dpi: int | None = None,
        width: float | None = None,
        height: float | None = None,
        font_size: float | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> bytes:
        """A figure of the runs of a :meth:`runtime_distributions` answer (or of a request
        body) as SVG, PDF or PNG bytes: runtime ECDFs, the fixed-budget view or the anytime
        absolute rank. With ``path`` the bytes are also written to that file."""
        if isinstance(body, RuntimeDistributions):
            body = body.request
        fmt = self._plot_format(format)
        params = self._figure_params(fmt, dpi=dpi, width=width, height=height, font_size=font_size)
        params["figure"] = figure
        url = f"/v1/runtime-distributions/plot.{fmt}"
        return self._save(self.request("POST", url, json=dict(body), params=params).content, path)

    @staticmethod
    def _profile_body(
        kind: str,
        solvers: Sequence[str],
        matrix: Sequence[Sequence[float | None]],
        options: Mapping[str, Any],
    ) -> dict[str, Any]:
        cells = [[None if v is None else float(v) for v in row] for row in matrix]
        key = "final_errors" if kind == "accuracy" else "costs"
        body: dict[str, Any] = {"kind": kind, "solvers": list(solvers), key: cells}
        return body | {k: v for k, v in options.items() if v is not None}

    def profiles(
        self,
        kind: Literal["performance", "data", "accuracy"],
        solvers: Sequence[str],
        matrix: Sequence[Sequence[float | None]],
        *,
        problems: Sequence[str] | None = None,
        dims: Sequence[int] | None = None,
        initial_errors: Sequence[float] | None = None,
        max_digits: float | None = None,
    ) -> Profiles:
        """Performance, data or accuracy profiles as exact step functions.

        ``matrix`` is (problems × solvers): costs (performance, data) or final errors
        (accuracy); ``None`` = failure. ``dims`` for data profiles, ``initial_errors`` for
        accuracy profiles.
        """
        options = _profile_options(problems, dims, initial_errors, max_digits)
        body = self._profile_body(kind, solvers, matrix, options)
        return Profiles.parse(self._post("/v1/profiles", body))

    def profile_plot(
        self,
        kind: Literal["performance", "data", "accuracy"],
        solvers: Sequence[str],
        matrix: Sequence[Sequence[float | None]],
        *,
        problems: Sequence[str] | None = None,
        dims: Sequence[int] | None = None,
        initial_errors: Sequence[float] | None = None,
        max_digits: float | None = None,
        format: Literal["svg", "pdf", "png"] = "svg",
        dpi: int | None = None,
        width: float | None = None,
        height: float | None = None,
        font_size: float | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> bytes:
        """The profiles of :meth:`profiles` drawn as SVG, PDF or PNG bytes."""
        fmt = self._plot_format(format)
        params = self._figure_params(fmt, dpi=dpi, width=width, height=height, font_size=font_size)
        options = _profile_options(problems, dims, initial_errors, max_digits)
        body = self._profile_body(kind, solvers, matrix, options)
        url = f"/v1/profiles/plot.{fmt}"
        return self._save(self.request("POST", url, json=body, params=params).content, path)


def _profile_options(
    problems: Sequence[str] | None,
    dims: Sequence[int] | None,
    initial_errors: Sequence[float] | None,
    max_digits: float | None,
) -> dict[str, Any]:
    return {
        "problems": None if problems is None else list(problems),
        "dims": None if dims is None else [int(n) for n in dims],
        "initial_errors": None if initial_errors is None else [float(e) for e in initial_errors],
        "max_digits": max_digits,
    }
