"""Fill claude-mem's Chroma collection with the documents its own backfill writes, faster.

Run by ``peer_chroma.fill`` under the Python of claude-mem's ``chroma-mcp`` environment
(``uvx --from chroma-mcp==0.2.6 python``: chromadb, onnxruntime, tokenizers), never in
memlite's venv. Arguments: the Chroma data directory and claude-mem's database.

Why: claude-mem's backfill embeds every document through Chroma's default embedding
function, which pads each text to 256 tokens; on the bench machine it synced ~1.1
observations (3.3 documents) a second, so 10,000 observations would take hours. This
script writes the SAME documents (claude-mem 13.25.3's format, read from the documents
its backfill wrote: ``obs_<id>_narrative`` holding the narrative, ``obs_<id>_text`` the
text, ``obs_<id>_fact_<i>`` each fact; the metadata keys below) with embeddings from the
SAME embedding function (Chroma's ``ONNXMiniLM_L6_V2``, the model file the bench placed in
its cache) whose tokenizer pads each batch to its longest text instead of 256 tokens.
Padded positions are masked out of both the attention and the mean pooling, so the
vectors are the same up to float rounding; the script checks that on a sample (cosine
>= 0.999) before it writes anything.

Documents already in the collection (a backfill that started) are skipped. Prints one
JSON line: ``{"added_docs", "observations", "seconds", "min_cosine"}``.

``shift`` mode (``peer_chroma_fill.py shift CHROMA_DIR DB DAYS``): moves every
observation's date into the last ``DAYS`` days, in claude-mem's database and in its
Chroma metadata alike, keeping their order and spacing scaled. Why: with Chroma,
claude-mem's search keeps only matches of the last 90 days (unless a date range is
asked), and the bench's observations are dated from 2025-01-01; left there, every
semantic match would be dropped and the search would return nothing.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time

import numpy as np

BATCH = 2048
COLLECTION = "cm__claude-mem"
"""claude-mem 13.25.3 keeps every project in one collection named after itself."""


def as_list(raw: str | None) -> list[str]:
    if not raw:
        return []
    try:
        value = json.loads(raw)
    except ValueError:
        return [raw] if raw.strip() else []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def docs_of(row: sqlite3.Row) -> list[tuple[str, str, dict]]:
    """(id, document, metadata) for one observation, as claude-mem's backfill writes them."""
    base = {"sqlite_id": row["id"], "doc_type": "observation",
            "memory_session_id": row["memory_session_id"], "project": row["project"],
            "platform_source": "claude", "created_at_epoch": row["created_at_epoch"],
            "type": row["type"] or "discovery", "title": row["title"] or "Untitled"}
    if row["subtitle"]:
        base["subtitle"] = row["subtitle"]
    for key in ("concepts", "files_read", "files_modified"):
        items = as_list(row[key])
        if items:
            base[key] = ",".join(items)
    out = []
    if row["narrative"]:
        out.append((f"obs_{row['id']}_narrative", row["narrative"],
                    {**base, "field_type": "narrative"}))
    if row["text"]:
        out.append((f"obs_{row['id']}_text", row["text"], {**base, "field_type": "text"}))
    for i, fact in enumerate(as_list(row["facts"])):
        out.append((f"obs_{row['id']}_fact_{i}", fact,
                    {**base, "field_type": "fact", "fact_index": i}))
    return out


def main(chroma_dir: str, db: str, collection_name: str = COLLECTION) -> None:
    import chromadb  # chroma-mcp's environment only (the module's helpers need none)
    from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

    started = time.perf_counter()
    fixed = ONNXMiniLM_L6_V2()  # Chroma's own: every text padded to 256 tokens
    fixed._download_model_if_not_exists()  # the bench placed the files: no download
    fast = ONNXMiniLM_L6_V2()
    fast.tokenizer.no_padding()  # each text at its own length

    def embed(texts: list[str]) -> list[np.ndarray]:
        """Chroma's forward pass over texts of one token length at a time: batches
        without any padding (it encodes each text alone, so a batch must be
        rectangular)."""
        lengths = [len(fast.tokenizer.encode(t).ids) for t in texts]
        out: list[np.ndarray | None] = [None] * len(texts)
        for length in sorted(set(lengths)):
            same = [i for i, n in enumerate(lengths) if n == length]
            for i, vector in zip(same, fast._forward([texts[i] for i in same], 64),
                                 strict=True):
                out[i] = vector
        return out  # type: ignore[return-value]

    client = chromadb.PersistentClient(path=chroma_dir)
    collection = client.get_or_create_collection(collection_name)
    have = set(collection.get(include=[])["ids"])
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    rows = conn.execute("SELECT * FROM observations ORDER BY id").fetchall()
    docs = [doc for row in rows for doc in docs_of(row) if doc[0] not in have]
    sample = [d[1] for d in docs[:64]] or ["nothing"]
    a, b = np.asarray(fixed(sample)), np.asarray(embed(sample))
    min_cosine = float(np.min(np.sum(a * b, axis=1)
                              / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))))
    if min_cosine < 0.999:
        raise SystemExit(f"unpadded embeddings differ from Chroma's: cosine {min_cosine}")
    for start in range(0, len(docs), BATCH):
        chunk = docs[start:start + BATCH]
        texts = [d[1] for d in chunk]
        collection.add(ids=[d[0] for d in chunk], documents=texts,
                       metadatas=[d[2] for d in chunk], embeddings=embed(texts))
    observations = {d[2]["sqlite_id"] for d in docs}
    print(json.dumps({"added_docs": len(docs), "observations": len(observations),
                      "seconds": round(time.perf_counter() - started, 1),
                      "min_cosine": round(min_cosine, 6)}))


def shift(chroma_dir: str, db: str, days: str) -> None:
    import chromadb

    conn = sqlite3.connect(db)
    first, last = conn.execute(
        "SELECT MIN(created_at_epoch), MAX(created_at_epoch) FROM observations").fetchone()
    end = int(time.time() * 1000) - 3_600_000
    span = max(last - first, 1)
    window = int(float(days) * 86_400_000)

    def moved(epoch: int) -> int:
        return end - int((last - epoch) * window / span)

    rows = conn.execute("SELECT id, created_at_epoch FROM observations").fetchall()
    new = {oid: moved(epoch) for oid, epoch in rows}
    with conn:
        conn.executemany(
            "UPDATE observations SET created_at_epoch = ?, created_at = ? WHERE id = ?",
            [(epoch, time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(epoch / 1000)), oid)
             for oid, epoch in new.items()])
    conn.close()
    collection = chromadb.PersistentClient(path=chroma_dir).get_collection(COLLECTION)
    got = collection.get(include=["metadatas"])
    ids, metas = [], []
    for doc_id, meta in zip(got["ids"], got["metadatas"], strict=True):
        if meta.get("doc_type") == "observation" and meta.get("sqlite_id") in new:
            ids.append(doc_id)
            metas.append({**meta, "created_at_epoch": new[meta["sqlite_id"]]})
    for start in range(0, len(ids), 1000):
        collection.update(ids=ids[start:start + 1000], metadatas=metas[start:start + 1000])
    print(json.dumps({"observations": len(new), "docs": len(ids), "newest": end}))


if __name__ == "__main__":
    if sys.argv[1] == "shift":
        shift(*sys.argv[2:5])
    else:
        main(*sys.argv[1:3], COLLECTION)
