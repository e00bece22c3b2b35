"""A plain Okapi BM25 on the standard library: the baseline the evals compare against.

Lower-cased word tokens (letters, digits, apostrophes), English stopwords dropped,
k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)). Any query term counts:
documents are ranked by the sum over the terms they hold. Ties keep document order.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["BM25", "STOPWORDS", "tokens"]

STOPWORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't
doing don't down during each few for from further had hadn't has hasn't have haven't having he
he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if
in into is isn't it it's its itself let's me more most mustn't my myself no nor not of off on
once only or other ought our ours ourselves out over own same shan't she she'd she'll she's
should shouldn't so some such than that that's the their theirs them themselves then there
there's these they they'd they'll they're they've this those through to too under until up
very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's
which while who who's whom why why's with won't would wouldn't you you'd you'll you're you've
your yours yourself yourselves
""".split())

_WORD = re.compile(r"[a-z0-9']+")


def tokens(text: str) -> list[str]:
    return [w for w in (t.strip("'") for t in _WORD.findall(text.lower()))
            if w and w not in STOPWORDS]


class BM25:
    """An index over ``[(key, text)]``; ``top(query, k)`` gives the best keys."""

    def __init__(self, docs: Sequence[tuple[str, str]], k1: float = 1.2, b: float = 0.75):
        self.keys = [key for key, _ in docs]
        self.tf = [Counter(tokens(text)) for _, text in docs]
        self.lengths = [sum(tf.values()) for tf in self.tf]
        self.avg = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        df: Counter[str] = Counter()
        for tf in self.tf:
            df.update(tf.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
        self.k1, self.b = k1, b

    def scores(self, query: str) -> list[float]:
        terms = [t for t in tokens(query) if t in self.idf]
        out = []
        for tf, length in zip(self.tf, self.lengths, strict=True):
            s = 0.0
            norm = self.k1 * (1 - self.b + self.b * length / (self.avg or 1.0))
            for t in terms:
                f = tf.get(t)
                if f:
                    s += self.idf[t] * f * (self.k1 + 1) / (f + norm)
            out.append(s)
        return out

    def top(self, query: str, k: int) -> list[str]:
        scored = [(s, i) for i, s in enumerate(self.scores(query)) if s > 0]
        scored.sort(key=lambda p: (-p[0], p[1]))
        return [self.keys[i] for _, i in scored[:k]]
