"""How ``hybrid`` search merges its lists, and the two re-orderings that follow.

Lists (each best first): BM25 over any of the query's terms, the vector neighbours above
the model's floor, and for a query naming a file the observations holding that file (in
the asked role first). Each list gives a document ``weight / (k + rank)``; the sums order
the result (weighted reciprocal-rank fusion). Then:

* a light newest-first list over the candidates (``recency_weight``), so that of two
  equally good matches the later one wins; with a temporal query ("current", "latest",
  "what did we decide") the candidates scoring at least ``temporal_band`` of the best
  (the similar matches) are put newest first, and so is a newer match of the top
  ``temporal_depth`` whose vector is ``temporal_like`` close to the best match's (the
  newest decision on the same topic, even when it matches the query poorly: user trial
  round 4, finding 10; a discovery is never lifted, it replaces nothing);
* near-duplicates of the top matches give their slots to different matches
  (``diversify``);
* the best match's follow-up from the same session (written within an hour of it, and in
  either list's top 10) takes slot 4 if it ranks lower (``admit_followup``): a question
  about a problem is often answered by the fix written down minutes later, in other
  words. Slot 4, not higher, so the first three matches never move. Chosen on the dev
  halves: own eval dev recall@5 0.965 -> 0.977, LoCoMo dev hit@5 0.801 -> 0.811 (slot 5:
  0.977 / 0.808; slot 3: 0.965 / 0.810; two follow-ups, slots 4 and 5: 0.985 / 0.813).
  The best match's next observation in its session is eligible too when it is in
  neither list (``followup_next``; the fix is often in other words than both the
  question and the problem, "API client has no request timeout" then "Added a 15s
  timeout"; for a temporal query only a close companion of the newest state, below).
  One lookup on an index (~50 us at 100k observations).
  Chosen on the dev halves grown in round 6 (195 own queries): recall@5 0.899 -> 0.906,
  LoCoMo dev hit@5 0.816 -> 0.817 (also for temporal queries, before the cue-phrase
  change: 0.897 -> 0.898, LoCoMo the same). That next observation takes the slot before
  any other eligible one (``followup_prefer_next``) unless it is a discovery: an action
  written down right after the best match (a change, a decision, a fix) is what was done
  about it, while an earlier note of the session or a later one further away is context.
  Round 7, own dev half (211 queries): recall@5 0.912 -> 0.917 (three paraphrases whose
  slot went to the note written before the problem, or to a later one, gain; none
  loses); LoCoMo dev the same, 0.817: its items are all discoveries, so it cannot tell
  (for any next observation, discoveries too: own dev 0.919 but LoCoMo dev 0.805, where
  the next fact of a conversation is rarely about the same thing). For a temporal query
  the best match (after the lift, the newest state) has its next observation admitted
  the same way only when it is no discovery and its vector is ``temporal_companion``
  (0.5) cosine-close to the best match's: the note written minutes after the newest
  decision that says how it was carried out ("useLiveMetrics rewritten with
  EventSource" after "Switched live metrics to Server-Sent Events") answers "how is
  live data pushed now" too, in neither's words. Round 7, own dev (211 queries):
  recall@5 0.937 -> 0.943 (temporal 0.88 -> 0.90: two gains and a half, no loss);
  0.4: 0.938, 0.6: 0.941, 0.7: 0.937, any next observation (0): 0.933; LoCoMo dev the
  same (0.817). One more index lookup and two codes for a temporal query;
* a superseded observation (shown only on request) never ranks above the observation
  that replaced it: it moves to just below it.

Before fusing, the vector list keeps its first ``vector_free_ranks`` (10) neighbours
down to ``vector_free_floor`` (0.4) of the model's relevance floor (``search.RELEVANCE_FLOOR``;
MiniLM's 0.25 -> 0.1), the rest at the floor itself, when full text found anything: the
answer to a paraphrase often shares no word with it and scores just under the floor (dev
misses at cosine 0.11-0.23, ranked 1-12 by the KNN: "what do we fingerprint data blocks
with today" for "Switched chunk ids from SHA-256 to BLAKE3", 0.20, second). The floor
keeps its job where it matters: ``semantic`` alone keeps it whole, and so does a
``hybrid`` query full text found nothing for (a stray word list stays empty). Chosen on the
dev halves, round 7 (211 own queries): MiniLM recall@5 0.917 -> 0.937 (paraphrase 0.92 ->
0.94, temporal 0.85 -> 0.88), wordllama 0.876 -> 0.895, LoCoMo dev the same (0.817; its
answers score >= 0.49); first 5 ranks 0.935, 20 ranks 0.937, a share of 0 the same as
0.4, 0.6: 0.932; one floor of
0.1 for all ranks: 0.932. Each such neighbour votes its cosine's share of the floor
(``fuse``'s ``vector_share``; a full vote let a weak neighbour sharing a framing word
with the query outrank the paraphrase's answer: same dev figures, MRR 0.876 -> 0.873).

The weights were calibrated on the dev halves of LoCoMo and of the own eval
(``python -m bench.eval.tune``; the test halves are never read there): a small k (5)
trusts each list's top ranks; full text and vectors weigh the same; each full-text hit
counts by the share of the query's terms it holds (``coverage_power`` 1: within 0.008
hit@5 of the best setting on LoCoMo dev and the best MRR on the own dev half, and the one
that keeps a framing-word match from outranking the vector hit on a paraphrase); the
temporal band 0.7 lifted the own dev MRR from 0.92 to 0.96; ``temporal_like`` 0.7 (of 0.5,
0.6, 0.7 and off) on the grown own dev half (121 queries): recall@5 0.975 -> 0.983,
temporal queries 0.94 -> 0.98, LoCoMo dev unchanged (its items are discoveries).
``diversity`` 0.2 (of 0, 0.1, 0.2, 0.3, 0.4, 0.5) on the same 161 own dev queries and
LoCoMo dev: recall@5 0.982 -> 0.988, hit@5 0.813 -> 0.816 (0.5 before; 0 and 0.1 lose
on LoCoMo, 0.3 and 0.4 on one or the other). Ranks, not raw scores, are
summed: BM25 and cosine live on scales that differ per query, and score sums (min-max,
saturating) did worse on LoCoMo dev (BENCHMARKS.md "Retrieval on LoCoMo"). The file
weights (2, and half that for the other role) were set by hand, not calibrated: neither
dev half has enough file queries to tell.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs
import numpy as np

__all__ = ["DEFAULT_FUSION", "Fusion", "admit_followup", "demote_superseded", "diversify",
           "fuse", "favour_newest"]


@attrs.frozen(kw_only=True)
class Fusion:
    """The weights of ``hybrid`` (module docstring). ``depth`` bounds each list."""

    k: float = 5.0
    fts_weight: float = 1.0
    vector_weight: float = 1.0
    coverage_power: float = 1.0  # full-text hits count (share of query terms held) ** this
    file_weight: float = 2.0
    other_role_weight: float = 0.5  # a file held in the role the query did not ask for
    recency_weight: float = 0.1
    temporal_band: float = 0.7  # 1.0: temporal queries get no special order
    temporal_depth: int = 10  # ... and of these top matches, the ones whose vector is
    temporal_like: float = 0.7  # ... this close to the best match's count as similar too
    date_weight: float = 1.0  # the list of matches created in a date the query names
    diversity: float = 0.2  # 0: no de-duplication of near-identical top matches
    diversity_window: int = 15
    followup_slot: int = 4  # 0: no same-session follow-up is admitted (``admit_followup``)
    followup_depth: int = 10  # ... and only one in either list's top this many
    followup_window_ms: int = 3_600_000  # ... written within this long of the top match
    followup_next: int = 1  # 1: the top match's next observation in its session is eligible
    temporal_companion: float = 0.5  # ... for a temporal query, when this like the top
    followup_prefer_next: int = 1  # 1: ... and, unless a discovery, goes before the others
    vector_free_ranks: int = 10  # hybrid: the first this many neighbours need only
    vector_free_floor: float = 0.4  # ... this share of the model's relevance floor
    depth: int = 50


DEFAULT_FUSION = Fusion()


def fuse(fts_ids: Sequence[int], vector_ids: Sequence[int], *,
         fusion: Fusion = DEFAULT_FUSION, newest_first: Sequence[int] = (),
         file_ids: Sequence[int] = (), other_file_ids: Sequence[int] = (),
         fts_coverage: dict[int, float] | None = None,
         dated_ids: Sequence[int] = (),
         vector_share: dict[int, float] | None = None) -> list[tuple[int, float]]:
    """Weighted reciprocal-rank fusion: ``[(id, score)]``, best first (ties: lower id).

    ``fts_coverage`` (id -> share of the query's terms the document holds) makes the
    full-text list score-aware: each of its documents counts ``coverage **
    coverage_power`` of its weight, so a list of rows that only share a framing word
    ("times", "changes") with a paraphrased question cannot outvote the vector list.

    ``vector_share`` (id -> share) does the same for the vector list's neighbours let in
    under the model's floor (``vector_free_ranks``): each counts its cosine's share of the
    floor, so a weak neighbour that also shares a framing word with the query cannot beat
    a strong one.

    ``newest_first`` (the candidates by time, newest first) is a tie-breaking list,
    weighted ``recency_weight``; it adds no document of its own.
    """
    scores: dict[int, float] = {}
    if fts_coverage is not None and fusion.coverage_power:
        for rank, oid in enumerate(fts_ids[:fusion.depth], start=1):
            share = fts_coverage.get(oid, 1.0) ** fusion.coverage_power
            scores[oid] = scores.get(oid, 0.0) + fusion.fts_weight * share / (fusion.k + rank)
        fts_ids = ()
    if vector_share:
        for rank, oid in enumerate(vector_ids[:fusion.depth], start=1):
            share = vector_share.get(oid, 1.0)
            scores[oid] = scores.get(oid, 0.0) + fusion.vector_weight * share / (fusion.k + rank)
        vector_ids = ()
    for weight, ids in ((fusion.fts_weight, fts_ids), (fusion.vector_weight, vector_ids),
                        (fusion.file_weight, file_ids),
                        (fusion.file_weight * fusion.other_role_weight, other_file_ids),
                        (fusion.date_weight, dated_ids)):
        for rank, oid in enumerate(ids[:fusion.depth], start=1):
            scores[oid] = scores.get(oid, 0.0) + weight / (fusion.k + rank)
    if fusion.recency_weight:
        for rank, oid in enumerate(newest_first, start=1):
            if oid in scores:
                scores[oid] += fusion.recency_weight / (fusion.k + rank)
    return _ordered(scores)


def favour_newest(ranked: Sequence[tuple[int, float]], created: dict[int, int], *,
                  fusion: Fusion = DEFAULT_FUSION,
                  like_best: dict[int, float] | None = None) -> list[tuple[int, float]]:
    """For a temporal query: the similar matches newest first (``created``: id -> ms); the
    rest keep their order.

    A match is similar when it scores at least ``temporal_band`` of the best, or when it
    is among the top ``temporal_depth`` and its vector is at least ``temporal_like``
    cosine-close to the best match's (``like_best``: id -> that cosine). The second way
    is for the newest decision on a topic that ranks low because it embeds or matches the
    query poorly (a long shell command, other words): it is about the same thing as the
    best match, so it still replaces it (user trial round 4, finding 10: "what HTTP client
    do we use now" gave the first decision, the newest 4th). The similar matches take the
    first slots, newest first; the others follow in their order. The scores are handed out
    again in the new order, so they keep descending.
    """
    if not ranked or fusion.temporal_band >= 1.0:
        return list(ranked)
    best = ranked[0][1]
    like = like_best or {}
    then = created.get(ranked[0][0], 0)
    band = [i for i, (oid, score) in enumerate(ranked)
            if score >= best * fusion.temporal_band
            or (i < fusion.temporal_depth and created.get(oid, 0) > then
                and like.get(oid, 0.0) >= fusion.temporal_like)]
    chosen = set(band)
    order = sorted((ranked[i] for i in band), key=lambda item: (-created.get(item[0], 0),
                                                               -item[0]))
    order += [item for i, item in enumerate(ranked) if i not in chosen]
    return [(oid, score) for (oid, _), (_, score) in zip(order, ranked, strict=True)]


def diversify(ranked: Sequence[tuple[int, float]], codes: dict[int, bytes], *,
              fusion: Fusion = DEFAULT_FUSION) -> list[tuple[int, float]]:
    """The first ``diversity_window`` matches reordered so that near-duplicates do not
    fill the top: maximal marginal relevance over the vectors' int8 ``codes`` (id ->
    bytes; cosine is scale-free, so the codes do).

    Each next pick maximises ``score / best - diversity * max cosine to those already
    picked``: a fact stated three times in nearly the same words holds one top slot, not
    three, and the slots go to the next-best different matches (a question whose answer
    needs two facts gets both). The first match stays first. The scores are handed out
    again in the new order, so they keep descending. Ids without a code count as unlike
    every other.
    """
    window = list(ranked[:fusion.diversity_window])
    if len(window) < 3 or not fusion.diversity or window[0][1] <= 0:
        return list(ranked)
    # One Gram matrix of the window's unit codes (a row of zeros for an id without one).
    dims = {len(code) for code in codes.values()}
    dim = dims.pop() if len(dims) == 1 else 0
    matrix = np.zeros((len(window), dim), dtype=np.float32)
    for row, (oid, _) in enumerate(window):
        code = codes.get(oid)
        if dim and code is not None:
            matrix[row] = np.frombuffer(code, dtype=np.int8)
    norms = np.linalg.norm(matrix, axis=1)
    matrix /= np.maximum(norms, 1e-12)[:, None]
    similar = (matrix @ matrix.T).tolist()
    best = window[0][1]
    picked = [0]
    left = list(range(1, len(window)))
    closest = dict.fromkeys(left, 0.0)  # highest cosine to any pick so far
    while left:
        last = similar[picked[-1]]
        for j in left:
            closest[j] = max(closest[j], last[j])
        i = max(left, key=lambda j: (window[j][1] / best - fusion.diversity * closest[j], -j))
        picked.append(i)
        left.remove(i)
    scores = [score for _, score in window]
    return [(window[i][0], score) for i, score in zip(picked, scores, strict=True)] + \
        list(ranked[fusion.diversity_window:])


def admit_followup(ranked: Sequence[tuple[int, float]], listed: Sequence[int],
                   sessions: dict[int, str], created: dict[int, int], *,
                   fusion: Fusion = DEFAULT_FUSION,
                   preferred: int | None = None) -> list[tuple[int, float]]:
    """The best match's follow-up, from the same session, moved up to ``followup_slot``.

    Work is written down as several observations a few minutes apart ("Overview takes
    6.5 s to render", then "Switched charting to ECharts", then "render time dropped to
    1.4 s"): a question about the problem is often answered by its follow-up too, which
    shares few of its words. The best-ranked match below ``followup_slot`` that is in
    ``listed`` (either list's top ``followup_depth``), shares the best match's session
    (``sessions``: id -> session) and was written within ``followup_window_ms`` of it
    (``created``: id -> ms) takes that slot; ``preferred`` (the best match's next
    observation, when the caller favours it) goes before the others below the slot;
    the matches from there down move one place. Only that slot and those below it
    change, so the first ``followup_slot - 1`` matches (and the reciprocal rank of any
    match among them) stay as they were. The scores are handed out again in the new
    order, so they keep descending.
    """
    slot = fusion.followup_slot
    if slot < 1 or len(ranked) <= slot:
        return list(ranked)
    top = ranked[0][0]
    session = sessions.get(top)
    if session is None:
        return list(ranked)
    eligible = set(listed)
    when = created.get(top, 0)
    below = [oid for oid, _ in ranked[slot:]]
    if preferred is not None and preferred in below:
        below.remove(preferred)
        below.insert(0, preferred)
    chosen = next((oid for oid in below
                   if oid in eligible and sessions.get(oid) == session
                   and abs(created.get(oid, when) - when) <= fusion.followup_window_ms), None)
    if chosen is None:
        return list(ranked)
    order = [oid for oid, _ in ranked]
    order.remove(chosen)
    order.insert(slot - 1, chosen)
    return [(oid, score) for oid, (_, score) in zip(order, ranked, strict=True)]


def demote_superseded(ranked: Iterable[int], superseded_by: dict[int, int | None]) -> list[int]:
    """``ranked`` with each superseded id that ranks above the id that replaced it moved
    to just below that one (when both are in the list; chains a <- b <- c end c, b, a)."""
    order = list(ranked)
    present = set(order)
    for _ in range(len(order)):  # each pass settles at least one move; bounded anyway
        changed = False
        for oid in list(order):
            parent = superseded_by.get(oid)
            if parent is None or parent not in present or parent == oid:
                continue
            if order.index(oid) < order.index(parent):
                order.remove(oid)
                order.insert(order.index(parent) + 1, oid)
                changed = True
        if not changed:
            break
    return order


def _ordered(scores: dict[int, float]) -> list[tuple[int, float]]:
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
