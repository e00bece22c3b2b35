"""The dev halves only, for tuning: own eval and LoCoMo, default fusion, with baselines.

Prints recall@5 / MRR of the own eval's dev half (per category too) and LoCoMo's dev
hit@5, for bm25 (stdlib), fts, semantic and hybrid, and with ``--misses`` the dev queries
whose relevant observations miss the hybrid top 5. It never builds, runs or prints a test
query: the test halves are for ``bench.eval.run`` / ``bench.eval.locomo`` at the end.

    python -m bench.eval.dev [--misses] [--cache DIR] [--no-locomo] [--variant 'k=10']

Only LoCoMo's dev conversations are stored, so its figures differ from
``bench.eval.locomo``'s dev rows by a few questions (FTS5's BM25 statistics span the
whole table); compare variants within one run of this script.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import attrs

from bench.eval import dataset as dataset_module
from bench.eval import locomo
from bench.eval import run as own
from memlite.embed import load_embedder
from memlite.storage.search import DEFAULT_FUSION

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep the LoCoMo database here between runs")
    parser.add_argument("--misses", action="store_true")
    parser.add_argument("--no-locomo", action="store_true")
    parser.add_argument("--variant", action="append", default=[],
                        help="hybrid with Fusion fields changed, e.g. 'temporal_like=0.5;k=10'"
                             " (repeatable; each is reported as another hybrid row)")
    args = parser.parse_args(argv)
    variants = {"hybrid": DEFAULT_FUSION}
    for text in args.variant:
        changes = {}
        for part in filter(None, text.split(";")):
            name, _, value = part.partition("=")
            current = getattr(DEFAULT_FUSION, name.strip())
            changes[name.strip()] = type(current)(float(value)) \
                if not isinstance(current, str) else value
        variants[text] = attrs.evolve(DEFAULT_FUSION, **changes)
    data = dataset_module.load()
    dev, _ = own.split(data["queries"])  # the test half is dropped here, unread
    data = {**data, "queries": dev}
    baseline = own.bm25_ranker(data)
    with tempfile.TemporaryDirectory(prefix="memlite-dev-") as tmp:
        corpus = own.build_corpus(data, Path(tmp) / "own", load_embedder(args.embedder))
        categories = sorted({q["category"] for q in dev})
        rows = {"bm25": own.evaluate_keys(baseline, dev)}
        per = {"bm25": {c: own.evaluate_keys(baseline, [q for q in dev if q["category"] == c])
                        for c in categories}}
        for mode in own.MODES:
            for label, fusion in (variants.items() if mode == "hybrid" else [(mode, None)]):
                fusion = fusion or DEFAULT_FUSION
                rows[label] = own.evaluate(corpus, dev, mode, fusion)
                per[label] = {c: own.evaluate(corpus, [q for q in dev if q["category"] == c],
                                              mode, fusion) for c in categories}
        print(f"own dev ({len(dev)} queries)")
        print("  ranking   r@5    r@10   MRR    | " + " ".join(f"{c[:6]:>6}" for c in categories))
        for name, s in rows.items():
            print(f"  {name[:9]:9} {s.recall5:.3f}  {s.recall10:.3f}  {s.mrr:.3f}  | "
                  + " ".join(f"{per[name][c].recall5:6.2f}" for c in categories))
        if args.misses:
            title = {o["key"]: o["title"] for o in data["observations"]}
            for q in dev:
                found = own.ranked_keys(corpus, q, "hybrid")
                missing = [k for k in q["relevant"] if k not in found[:5]]
                if missing:
                    print(f"  MISS {q['id']} [{q['category']}] {q['query']!r}")
                    for k in missing:
                        where = found.index(k) + 1 if k in found else "-"
                        print(f"      want {k} (rank {where}) {title[k]}")
                    for k in found[:5]:
                        print(f"      got  {k} {title[k]}")
        corpus.conn.close()
        if not args.no_locomo:
            items, questions = locomo.load()
            dev_convs, _ = locomo.split([it.conversation for it in items])
            lo_dev = [q for q in questions if q.conversation in dev_convs]
            lo_items = [it for it in items if it.conversation in dev_convs]
            lo = locomo.build_cached(lo_items, lo_dev, args.cache or Path(tmp) / "lo",
                                     args.embedder)
            print(f"locomo dev ({len(lo_dev)} questions): hit@5 per category "
                  + "/".join(locomo.CATEGORIES.values()) + ", all, MRR")
            rankers = [("bm25", locomo.bm25_ranker(lo_items)),
                       ("fts", locomo.memlite_ranker(lo, "fts")),
                       ("semantic", locomo.memlite_ranker(lo, "semantic")),
                       *((label, locomo.memlite_ranker(lo, "hybrid", fusion))
                         for label, fusion in variants.items())]
            for name, rank in rankers:
                cats = [locomo.score(rank, [q for q in lo_dev if q.category == c])
                        for c in locomo.CATEGORIES]
                s = locomo.score(rank, lo_dev)
                print(f"  {name[:9]:9} " + " ".join(f"{c.hit5:.3f}" for c in cats)
                      + f"  all {s.hit5:.3f}  MRR {s.mrr:.3f}")
            lo.conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
