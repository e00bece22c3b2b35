"""Calibrate hybrid search on the dev halves only: LoCoMo's dev conversations and the own
eval's dev queries (``bench/eval/run.py``'s odd ids). Test halves are never read here.

Prints, for each setting of a small grid of ``Fusion`` weights, LoCoMo dev hit@5 (and by
category) and own-eval dev recall@5, best mean first; and per model the cosine of the
relevant neighbours on the dev halves, from which ``RELEVANCE_FLOOR`` is chosen (a floor
must keep nearly every relevant neighbour while dropping unrelated ones).

    python -m bench.eval.tune --embedder minilm --cache /tmp/memlite-tune
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import attrs

from bench.eval import dataset as dataset_module
from bench.eval import locomo
from bench.eval import run as own
from memlite.embed import load_embedder
from memlite.storage.search import DEFAULT_FUSION, Fusion

__all__ = ["main"]


def grid() -> list[Fusion]:
    return [attrs.evolve(DEFAULT_FUSION, k=k, fts_weight=fw, coverage_power=cp,
                         recency_weight=rw, temporal_band=tb)
            for k, fw, cp, rw, tb in itertools.product((5.0, 10.0), (0.75, 1.0), (0.0, 1.0, 2.0),
                                                       (0.1,), (1.0, 0.7))]


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep the LoCoMo database here between runs")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--floors-only", action="store_true",
                        help="skip the fusion grid; print the floor cosines only")
    args = parser.parse_args(argv)
    items, questions = locomo.load()
    dev_convs, _ = locomo.split([it.conversation for it in items])
    lo_dev = [q for q in questions if q.conversation in dev_convs]
    data = dataset_module.load()
    own_dev, _ = own.split(data["queries"])
    with tempfile.TemporaryDirectory(prefix="memlite-tune-") as tmp:
        cache = args.cache or Path(tmp)
        lo = locomo.build_cached(items, questions, cache, args.embedder)
        mine = own.build_corpus(data, Path(tmp) / "own", load_embedder(args.embedder))
        rows = []
        for fusion in [] if args.floors_only else grid():
            a = locomo.score(locomo.memlite_ranker(lo, "hybrid", fusion), lo_dev)
            b = own.evaluate(mine, own_dev, "hybrid", fusion)
            rows.append(((a.hit5 + b.recall5) / 2, a, b, fusion))
        rows.sort(key=lambda r: -r[0])
        default = [r for r in rows if r[3] == DEFAULT_FUSION]
        for mean, a, b, f in [*rows[:args.top], *default]:
            print(f"mean {mean:.3f}  locomo dev hit@5 {a.hit5:.3f}  own dev r@5 "
                  f"{b.recall5:.3f} MRR {b.mrr:.3f}  k={f.k:g} fts={f.fts_weight:g} "
                  f"cov={f.coverage_power:g} recency={f.recency_weight:g} "
                  f"band={f.temporal_band:g}"
                  + ("  (default)" if f == DEFAULT_FUSION else ""))
        print(floors(lo, lo_dev, mine, own_dev))
        lo.conn.close()
        mine.conn.close()
    return 0


def floors(lo, lo_dev, mine, own_dev) -> str:
    """Cosines of the relevant top-10 neighbours on each dev half (and of the others)."""
    from memlite.storage.search import Filters, search

    out = []
    for label, runs in (
        ("locomo", [(lo.conn, q.text, q.conversation, lo.query_vectors[q.text],
                     {lo.key_of.get(i) for i in ()} | set(q.relevant), lo.key_of)
                    for q in lo_dev]),
        ("own", [(mine.conn, q["query"], q["project"], mine.query_vectors[q["id"]],
                  set(q["relevant"]), {v: k for k, v in mine.ids.items()})
                 for q in own_dev]),
    ):
        relevant: list[float] = []
        unrelated: list[float] = []
        for conn, text, project, vector, wanted, key_of in runs:
            found = search(conn, text, mode="semantic", filters=Filters(project=project),
                           query_vector=vector, limit=10,
                           fusion=attrs.evolve(DEFAULT_FUSION))
            for h in found.hits:
                (relevant if key_of.get(h.observation.id) in wanted else unrelated).append(
                    h.score)
        out.append(f"{label} dev semantic cosines: relevant p1 {percentile(relevant, 0.01):.3f}"
                   f" p2 {percentile(relevant, 0.02):.3f} p5 {percentile(relevant, 0.05):.3f}"
                   f" median {percentile(relevant, 0.5):.3f}; other top-10 p5 "
                   f"{percentile(unrelated, 0.05):.3f} median {percentile(unrelated, 0.5):.3f}")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
