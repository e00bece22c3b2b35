"""Writes bench/eval/dataset.json from the hand-written records of ``corpus_*.py``.

The observation and query texts are written by hand (one module a project, then the
queries added later: ``corpus_added``); only keys, session ids and timestamps are derived
mechanically (``dataset_spec.build``).

Run:  .venv/bin/python -m bench.eval.write_dataset
"""
import json
import os

from bench.eval import (
    corpus_added,
    corpus_android,
    corpus_billing,
    corpus_dash,
    corpus_etl,
    corpus_router,
    corpus_stash,
)
from bench.eval.dataset_spec import build

CORPUS = (corpus_billing, corpus_dash, corpus_stash, corpus_router, corpus_etl,
          corpus_android, corpus_added)
"""In the order the records were written: query and observation numbers follow it."""


def main():
    for part in CORPUS:
        part.add()
    data = build()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dataset.json")
    with open(out, "w") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")
    from bench.eval.dataset import load
    d = load(out)
    print(len(d["observations"]), "observations,", len(d["queries"]), "queries ->", out)


if __name__ == "__main__":
    main()
