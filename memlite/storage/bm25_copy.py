"""The in-memory copy of the observations' FTS5 index that ``bm25_index`` serves: each
term's postings (the rows holding it and its weighted count there), each row's id,
length, column lengths and project, kept current from FTS5's own counts (FTS5's
``bm25()`` computed from them in numpy: ``memlite.storage.bm25_score``). Why, what it
answers, how it stays current and what it costs: ``memlite.storage.bm25_index``.
"""

from __future__ import annotations

import itertools
import logging
import threading
import weakref
from array import array
from collections.abc import Iterable, Sequence
from typing import Any

import apsw
import numpy as np

from memlite.storage import fts
from memlite.storage.bm25_score import K1, B
from memlite.storage.fts import OBSERVATION_WEIGHTS, TOKENIZER
from memlite.storage.sqlvalue import integer, integer_or_none

__all__ = ["FOLD_LIMIT", "MEMORY_BUDGET", "TOKENIZER", "WEIGHTS", "Bm25Index"]

log = logging.getLogger(__name__)

MEMORY_BUDGET = 96 * 1024 * 1024
"""Bytes of postings an index may hold; past it, FTS5 answers (~15 million postings)."""
WEIGHTS = tuple(float(w) for w in OBSERVATION_WEIGHTS.split(","))
_COLUMNS = ("SELECT id, title, subtitle, narrative, facts, concepts, "
            "files_read || ' ' || files_modified, project FROM observations")
"""The values the insert trigger gives FTS5 (``schema._obs_fts_values``), then the
row's project."""
FOLD_LIMIT = 2_000
"""New rows a search takes into the copy itself (~0.1 s); past it (an import while the
worker runs), a new copy is built on its thread and FTS5 answers meanwhile."""
_MERGE_SHARE = 0.25
_BULK = 256
"""Rows added at once past which they are tokenized and merged in chunks (``_add_chunk``)."""
_CHUNK = 2_048
_MERGE_AT = 500_000
"""Added postings past which they are merged into the arrays even when fewer than a
quarter of them (8 bytes each while listed, plus each term's list)."""


class Bm25Index:
    """Postings of every observation held (see the module docstring); slots ``[0,
    count)`` are rows, ``alive`` False for a row dropped since."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.too_big = False
        self.stale = False
        self.unusable = False  # built, and its totals still were not FTS5's
        self._clear()

    def _clear(self) -> None:
        # Each connection's commit marks (``_marks``) when it last found the copy current.
        self._current: weakref.WeakKeyDictionary[apsw.Connection, tuple[int, int]] = \
            weakref.WeakKeyDictionary()
        self.terms: dict[str, int] = {}
        self.starts = np.zeros(1, dtype=np.int64)  # term id -> its postings, merged
        self.slots = np.zeros(0, dtype=np.int32)
        self.weights: np.ndarray = np.zeros(0, dtype=np.uint16)
        self.added: dict[int, tuple[array[int], array[float]]] = {}  # postings since
        self.added_count = 0
        self.ids = np.zeros(0, dtype=np.int64)  # slot -> observation id
        self.alive = np.zeros(0, dtype=bool)
        self.lengths = np.zeros(0, dtype=np.float64)  # tokens in all columns
        self.columns = np.zeros((0, len(WEIGHTS)), dtype=np.int32)  # tokens per column
        self.projects: dict[str, int] = {}
        self.project_of = np.zeros(0, dtype=np.int32)  # slot -> code in ``projects``
        self.count = 0
        self.by_id: dict[int, int] = {}  # observation id -> its live slot
        self.max_id = 0
        self.ascending = True  # ids[:count] strictly ascending (the newest slots last)
        self.totals = np.zeros(len(WEIGHTS), dtype=np.int64)  # live rows' column tokens
        self.rows = 0
        self.fts_rows = 0  # FTS5's row count and token total, at the last refresh
        self.fts_tokens = 0
        self._norm = np.zeros(0, dtype=np.float64)
        self._norm_avgdl = 0.0

    # -- building and keeping up -------------------------------------------------------

    def _room(self, more: int) -> None:
        need = self.count + more
        if need > len(self.ids):
            size = max(need, 2 * len(self.ids), 1024)
            self.ids = _grown(self.ids, size)
            self.alive = _grown(self.alive, size)
            self.lengths = _grown(self.lengths, size)
            self.columns = _grown(self.columns, size)
            self.project_of = _grown(self.project_of, size)

    def _add_many(self, tokenize: Any, rows: Iterable[Sequence[Any]]) -> None:
        """``_add_rows`` for rows read as they come (a build): ``_CHUNK`` at a time, so
        that a build never holds every row's text at once (a whole table read first left
        ~30 MB of Python's small-object arenas behind at 10,000 observations)."""
        source = iter(rows)
        pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        waiting = 0
        while chunk := list(itertools.islice(source, _CHUNK)):
            self._room(len(chunk))
            pending.append(self._add_chunk(tokenize, chunk))
            waiting += len(pending[-1][0])
            if waiting > max(_MERGE_AT, len(self.slots)):  # merged as the arrays double:
                self.merge(_joined(pending))  # each posting moved ~twice
                pending, waiting = [], 0
        if pending:
            self.merge(_joined(pending))

    def _add_rows(self, tokenize: Any, rows: Sequence[Sequence[Any]]) -> None:
        """Tokenize ``rows`` (``_COLUMNS``) into new slots and added postings."""
        if len(rows) >= _BULK:
            self._add_many(tokenize, rows)
            return
        self._room(len(rows))
        terms = self.terms
        for row in rows:
            oid = int(row[0])
            old = self.by_id.get(oid)
            if old is not None:
                self._drop(old)
            slot = self.count
            self.count += 1
            weighted: dict[str, float] = {}
            lengths = self.columns[slot]
            for c, weight in enumerate(WEIGHTS):
                text = row[c + 1]
                tokens = fts.document_tokens(tokenize, text) if text else []
                lengths[c] = len(tokens)
                for token in tokens:
                    weighted[token] = weighted.get(token, 0.0) + weight
            for token, f in weighted.items():
                tid = terms.setdefault(token, len(terms))
                listed = self.added.get(tid)
                if listed is None:
                    listed = self.added[tid] = (array("i"), array("f"))
                listed[0].append(slot)
                listed[1].append(f)
            self.added_count += len(weighted)
            self.ids[slot] = oid
            self.project_of[slot] = self._project_code(row[len(WEIGHTS) + 1])
            self.alive[slot] = True
            self.lengths[slot] = float(lengths.sum())
            self._norm_avgdl = 0.0  # a new length: recomputed at the next query
            self.by_id[oid] = slot
            self.totals += lengths
            self.rows += 1
            self.ascending = self.ascending and oid > self.max_id
            self.max_id = max(self.max_id, oid)
            if self.added_count > max(_MERGE_AT, _MERGE_SHARE * len(self.slots)):
                self.merge()  # a build's postings in steps: arrays, not lists, hold them

    def _add_chunk(self, tokenize: Any, rows: Sequence[Sequence[Any]],
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``_add_rows`` for many rows at once (a build): the rows' tokens counted and
        weighted by numpy (a Python step per token was 80% of a build: 2.5 of 3.1 s at
        10,000 observations); returns their postings (term ids, slots, weighted counts),
        for ``merge``."""
        for row in rows:  # an id held already (a resync's re-add) drops its old slot
            old = self.by_id.get(int(row[0]))
            if old is not None:
                self._drop(old)
        texts = [row[c + 1] or "" for row in rows for c in range(len(WEIGHTS))]
        term_ids, counts = self._tokenized(tokenize, texts)
        columns = np.asarray(counts, dtype=np.int32).reshape(len(rows), len(WEIGHTS))
        first = self.count
        slots = np.arange(first, first + len(rows), dtype=np.int64)
        weight = np.repeat(np.tile(np.asarray(WEIGHTS), len(rows)), counts)
        key = np.repeat(slots, columns.sum(axis=1)) << 32 | term_ids
        pairs, where = np.unique(key, return_inverse=True)  # by slot, then term
        f = np.bincount(where, weights=weight)  # sums of small integers: exact
        ids = np.fromiter((int(row[0]) for row in rows), dtype=np.int64, count=len(rows))
        self.count += len(rows)
        self.ids[first:self.count] = ids
        self.project_of[first:self.count] = [self._project_code(row[len(WEIGHTS) + 1])
                                             for row in rows]
        self.alive[first:self.count] = True
        self.columns[first:self.count] = columns
        self.lengths[first:self.count] = columns.sum(axis=1)
        self._norm_avgdl = 0.0
        self.by_id.update(zip(ids.tolist(), range(first, self.count), strict=True))
        self.totals += columns.sum(axis=0)
        self.rows += len(rows)
        self.ascending = self.ascending and int(ids[0]) > self.max_id \
            and bool((np.diff(ids) > 0).all())
        self.max_id = max(self.max_id, int(ids.max()))
        return (pairs & 0xFFFFFFFF), (pairs >> 32).astype(np.int32), f

    def _project_code(self, project: Any) -> int:
        return self.projects.setdefault(str(project), len(self.projects))

    def _tokenized(self, tokenize: Any, texts: list[Any]) -> tuple[np.ndarray, list[int]]:
        """The term ids of ``texts``' tokens, in order (new terms added), and each
        text's token count: one tokenizer call for all (``fts.tokens_of_texts``; a call
        per text cost ~3 µs, six a row), else a call per text."""
        split = fts.tokens_of_texts(tokenize, texts)
        if split is not None:
            flat, counts = split
        else:
            flat, counts = [], []
            for text in texts:
                tokens = fts.document_tokens(tokenize, text) if text else []
                flat.extend(tokens)
                counts.append(len(tokens))
        terms = self.terms
        for token in set(flat).difference(terms):
            terms[token] = len(terms)
        return np.fromiter(map(terms.__getitem__, flat), dtype=np.int64,
                           count=len(flat)), counts

    def _drop(self, slot: int) -> None:
        if self.alive[slot]:
            self.alive[slot] = False
            self.totals -= self.columns[slot]
            self.rows -= 1
            self.by_id.pop(int(self.ids[slot]), None)

    def merge(self, extra: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> None:
        """Fold the added postings (and ``extra``: term ids, slots, weighted counts of
        newer slots) into the arrays, by term then slot, leaving out the dropped rows'.

        Added slots are newer than every merged one, so each term's added postings go
        after its merged ones: the merged postings move by the count of postings added
        to the terms before theirs, with no sort of them. Temporaries: one position per
        merged posting (int32 below 2**31 postings: 26 MB at 100,000 observations)."""
        if not self.added and extra is None:
            return
        nterms = len(self.terms)
        slots, weights, starts = self.slots, self.weights, self.starts
        if self.rows < self.count and len(slots):  # drop the dropped rows' postings
            keep = self.alive[slots]
            if not keep.all():
                before = np.zeros(len(keep) + 1, dtype=np.int64)
                np.cumsum(keep, out=before[1:])
                slots, weights, starts = slots[keep], weights[keep], before[starts]
        parts = [(np.full(len(listed[0]), tid, dtype=np.int64),
                  np.frombuffer(listed[0], dtype=np.int32),
                  np.frombuffer(listed[1], dtype=np.float32).astype(np.float64))
                 for tid, listed in self.added.items()]
        if extra is not None:
            parts.append((extra[0].astype(np.int64), extra[1].astype(np.int32),
                          extra[2].astype(np.float64)))
        add_terms = np.concatenate([p[0] for p in parts])
        add_slots = np.concatenate([p[1] for p in parts])
        add_f = np.concatenate([p[2] for p in parts])
        # By term; within a term already by slot (the listed postings are older than
        # ``extra``'s, each in slot order), which a stable sort keeps.
        order = np.argsort(add_terms, kind="stable")
        add_terms, add_slots, add_f = add_terms[order], add_slots[order], add_f[order]
        old = np.zeros(nterms, dtype=np.int64)
        old[:len(starts) - 1] = np.diff(starts)
        added = np.bincount(add_terms, minlength=nterms)
        new_starts = np.zeros(nterms + 1, dtype=np.int64)
        np.cumsum(old + added, out=new_starts[1:])
        wide = weights.dtype != np.uint16 or (add_f.size > 0 and float(add_f.max()) > 65_535.0)
        out_slots = np.empty(int(new_starts[-1]), dtype=np.int32)
        out_weights = np.empty(len(out_slots), dtype=np.float32 if wide else np.uint16)
        if len(slots):  # merged posting j of term t moves by the postings added before t
            shift = (new_starts[:-1] - np.concatenate(([0], np.cumsum(old)[:-1]))).astype(
                np.int64 if len(out_slots) >= 2**31 else np.int32)
            at = np.repeat(shift, old)
            at += np.arange(len(slots), dtype=at.dtype)
            out_slots[at] = slots
            out_weights[at] = weights
            del at
        # Added posting i (sorted) of term t: after t's merged ones, at its rank in t.
        first_of = np.concatenate(([0], np.cumsum(added)[:-1]))
        at_added = (new_starts[:-1] + old - first_of)[add_terms] + np.arange(len(add_terms))
        out_slots[at_added] = add_slots
        out_weights[at_added] = add_f
        self.slots, self.weights, self.starts = out_slots, out_weights, new_starts
        self.added = {}
        self.added_count = 0

    def nbytes(self) -> int:
        return int(self.slots.nbytes + self.weights.nbytes + self.ids.nbytes
                   + self.lengths.nbytes + self.columns.nbytes + self.alive.nbytes
                   + self.project_of.nbytes
                   + self.starts.nbytes + 8 * self.added_count)

    def refresh(self, conn: apsw.Connection, *, rebuild: bool = True) -> bool:
        """Bring the index up to date with ``conn``'s view; True when it can answer.

        Without ``rebuild``, an index whose totals still disagree with FTS5's after
        dropping and adding rows (a text changed in place), or that would take in more
        than ``FOLD_LIMIT`` new rows, is not built again here: it says so in ``stale``
        and answers nothing.

        Its reads share one snapshot (a read transaction, unless the caller holds one):
        a row committed between reading FTS5's counts and reading the rows would
        otherwise make the totals disagree and start a needless build.

        A connection that found the copy current, and has seen no commit since, finds
        it current again without reading the counts (~5 µs, not ~20; ``_marks``)."""
        if self.too_big or self.stale or self.unusable:
            return False
        version = _marks(conn)
        if self._current.get(conn) == version:
            return True
        if conn.in_transaction:
            current = self._refresh(conn, rebuild)
        else:
            conn.execute("BEGIN")
            try:
                current = self._refresh(conn, rebuild)
            finally:
                conn.execute("COMMIT")
        if current:
            self._current[conn] = version
        return current

    def _refresh(self, conn: apsw.Connection, rebuild: bool) -> bool:
        averages = fts.fts5_averages(conn)
        if averages is None:
            return False
        tokenize = conn.fts5_tokenizer(*TOKENIZER)
        top = integer_or_none(conn.execute("SELECT MAX(id) FROM observations")
                              .fetchall()[0][0]) or 0
        if top > self.max_id:
            if not rebuild and top - self.max_id > FOLD_LIMIT:  # an import, say: tokenized
                self.stale = True  # on the build's thread, not inside this search
                return False
            new = conn.execute(f"{_COLUMNS} WHERE id > ? ORDER BY id", (self.max_id,))
            if top - self.max_id < _BULK:  # a search's usual few: listed apart, no merge
                self._add_rows(tokenize, new.fetchall())
            else:
                self._add_many(tokenize, new)
        if not self._agrees(averages):
            self._resync(conn, tokenize)
            if not self._agrees(averages):  # a text changed in place: start over
                if not rebuild:
                    self.stale = True
                    return False
                self._clear()
                averages = fts.fts5_averages(conn)
                self._add_many(tokenize, conn.execute(f"{_COLUMNS} ORDER BY id"))
                if averages is None or not self._agrees(averages):
                    self._clear()  # its tokens differ from FTS5's own: FTS5 answers,
                    self.unusable = True  # in this process from now on
                    log.warning("the in-memory full-text index does not match FTS5's "
                                "(another tokenizer version?): FTS5 answers")
                    return False
        if self.added_count > _MERGE_SHARE * max(len(self.slots), 1):
            self.merge()
        if self.nbytes() > MEMORY_BUDGET:
            self._clear()
            self.too_big = True
            return False
        values = fts.varints(averages, 1 + len(WEIGHTS)) or [0]
        self.fts_rows, self.fts_tokens = values[0], sum(values[1:])
        return True

    def _agrees(self, averages: bytes | None) -> bool:
        if averages is None:
            return False
        values = fts.varints(averages, 1 + len(WEIGHTS))
        return values is not None and values[0] == self.rows \
            and values[1:] == [int(t) for t in self.totals]

    def _resync(self, conn: apsw.Connection, tokenize: Any) -> None:
        """Drop the held rows the table no longer has; add the ones it has and the index
        does not (an id reused below the highest held)."""
        present = np.fromiter((r[0] for r in conn.execute("SELECT id FROM observations")),
                              dtype=np.int64)
        held = self.ids[:self.count]
        gone = np.flatnonzero(self.alive[:self.count] & ~np.isin(held, present))
        for slot in gone:
            self._drop(int(slot))
        missing = present[~np.isin(present, held[self.alive[:self.count]])]
        for start in range(0, len(missing), 500):
            chunk = ",".join(str(int(i)) for i in missing[start:start + 500])
            self._add_rows(tokenize, conn.execute(
                f"{_COLUMNS} WHERE id IN ({chunk}) ORDER BY id").fetchall())

    # -- answering ---------------------------------------------------------------------

    def postings(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """The live rows (slots) holding ``token`` and its weighted count in each (as
        held: uint16, or float32 when added since the last merge or too large)."""
        tid = self.terms.get(token)
        if tid is None:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint16)
        slots: np.ndarray = np.zeros(0, dtype=np.int32)
        f: np.ndarray = np.zeros(0, dtype=np.uint16)
        if tid + 1 < len(self.starts):
            lo, hi = int(self.starts[tid]), int(self.starts[tid + 1])
            slots, f = self.slots[lo:hi], self.weights[lo:hi]
        listed = self.added.get(tid)
        if listed is not None:
            slots = np.concatenate([slots, np.frombuffer(listed[0], dtype=np.int32)])
            f = np.concatenate([f, np.frombuffer(listed[1], dtype=np.float32)])
        if self.rows < self.count:  # some slots dropped since
            live = self.alive[slots]
            slots, f = slots[live], f[live]
        return slots, f

    def norms(self, avgdl: float) -> np.ndarray:
        """Each row's ``k1 * (1 - b + b * D / avgdl)``, kept while ``avgdl`` holds."""
        if self._norm_avgdl != avgdl or len(self._norm) != len(self.lengths):
            self._norm = K1 * (1 - B + B * self.lengths / avgdl)
            self._norm_avgdl = avgdl
        return self._norm


def _marks(conn: apsw.Connection) -> tuple[int, int]:
    """What changes when a commit could have changed the table since ``conn`` last
    looked: its ``PRAGMA data_version`` (which moves with any other connection's commit,
    in any process) and its own ``total_changes()`` (rows it wrote itself, which the
    pragma does not count: a search on the connection that wrote)."""
    return integer(conn.execute("PRAGMA data_version").fetchall()[0][0]), conn.total_changes()


def _joined(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros((size, *array.shape[1:]), dtype=array.dtype)
    out[:len(array)] = array
    return out


