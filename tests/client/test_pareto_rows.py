"""``ParetoRanking.rows`` against its implementation before the typing pass of the client split
(a comprehension of dict unions, kept below as the oracle), on real answers of the app."""

from __future__ import annotations

from typing import Any

from absrank_client import Client, ParetoRanking


def _rows_before(ranking: ParetoRanking) -> list[dict[str, Any]]:
    return [
        {"algorithm": a}
        | {f"{rule}_rank": ranks[i] for rule, ranks in ranking.ranks.items()}
        | {f"{rule}_score": scores[i] for rule, scores in ranking.scores.items()}
        for i, a in enumerate(ranking.algorithms)
    ]


def test_rows_are_as_before(client: Client) -> None:
    values = {"N": (0.65, 0.02), "M": (0.6, 0.05), "K": (0.61, 0.01)}
    scores = [
        {"problem": p, "algorithm": a, "run": r, "indicator": ind, "value": v * (1 + r / 10)}
        for p in ("z", "w")
        for r in (0, 1)
        for a, pair in values.items()
        for ind, v in zip(("hv", "igd"), pair, strict=True)
    ]
    ranking = client.create_pareto_ranking(scores, orientation={"hv": "max"})
    assert len(ranking.algorithms) == 3
    assert len(ranking.ranks) >= 2
    rows = ranking.rows()
    assert rows == _rows_before(ranking)
    assert [list(r) for r in rows] == [list(r) for r in _rows_before(ranking)]  # column order
