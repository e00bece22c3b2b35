"""The record makers of the own eval's hand-written corpus (``bench/eval/corpus_*.py``)
and how ``write_dataset`` turns the records into ``dataset.json``: keys, session ids and
timestamps derived mechanically (sessions spread over ~3 months, the observations of one
session a few minutes apart, in the order written).
"""
import datetime as _dt

PROJECTS = {}   # prefix -> dict(path, start, sessions, obs, queries)
_CUR = None


def project(prefix, path, start, n_sessions):
    global _CUR
    _CUR = PROJECTS[prefix] = {"path": path, "start": start, "n_sessions": n_sessions,
                               "obs": [], "queries": []}


def O(n, s, type_, title, subtitle, narrative, facts, concepts, files_read=(), files_modified=()):
    _CUR["obs"].append(dict(n=n, s=s, type=type_, title=title, subtitle=subtitle,
                            narrative=narrative, facts=list(facts), concepts=list(concepts),
                            files_read=list(files_read), files_modified=list(files_modified)))


def Q(category, query, relevant):
    _CUR["queries"].append(dict(category=category, query=query, relevant=list(relevant)))


EXTRA = []  # (prefix, query dict): queries added after the first 107, numbered after them


def QX(prefix, category, query, relevant):
    """A query added later (issue 14): numbered after every original query, so the
    dev/test split of the originals (by id parity) stays as it was."""
    EXTRA.append((prefix, dict(category=category, query=query, relevant=list(relevant))))


DEV_EXTRA = []  # (prefix, query dict): dev-only queries of issue 14's fifth round


def QD(prefix, category, query, relevant):
    """A query added to the DEV half only (issue 14, round 5): numbered after every other
    query with odd numbers only (q133, q135, ...), so it lands in the dev half and the test
    half stays exactly as it was."""
    DEV_EXTRA.append((prefix, dict(category=category, query=query, relevant=list(relevant))))


def build():
    projects, observations, queries = [], [], []
    qn = 0
    for prefix, p in PROJECTS.items():
        projects.append(p["path"])
        start = _dt.datetime.fromisoformat(p["start"])
        span = 88
        per_session = {}
        _offsets = {}
        for o in p["obs"]:
            s = o["s"]
            per_session[s] = per_session.get(s, 0) + 1
            idx = per_session[s] - 1
            day = round((s - 1) * span / max(1, p["n_sessions"] - 1))
            hour = 9 + (s * 5 + len(prefix)) % 8
            minute = (s * 13) % 40
            offset = _offsets.get(s, 0) + (0 if idx == 0 else 6 + (o["n"] * 7) % 13)
            _offsets[s] = offset
            t = start + _dt.timedelta(days=day, hours=hour, minutes=minute + offset,
                                      seconds=(o["n"] * 17) % 60)
            observations.append({
                "key": f"{prefix}-{o['n']:03d}", "project": p["path"],
                "session": f"{prefix}-s{s:02d}",
                "created_at": t.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "type": o["type"], "title": o["title"], "subtitle": o["subtitle"],
                "narrative": o["narrative"], "facts": o["facts"], "concepts": o["concepts"],
                "files_read": o["files_read"], "files_modified": o["files_modified"],
            })
        for q in p["queries"]:
            qn += 1
            queries.append({"id": f"q{qn:03d}", "project": p["path"], "category": q["category"],
                            "query": q["query"],
                            "relevant": [f"{prefix}-{r:03d}" for r in q["relevant"]]})
    for prefix, q in EXTRA:
        qn += 1
        queries.append({"id": f"q{qn:03d}", "project": PROJECTS[prefix]["path"],
                        "category": q["category"], "query": q["query"],
                        "relevant": [f"{prefix}-{r:03d}" for r in q["relevant"]]})
    for prefix, q in DEV_EXTRA:
        qn += 1 if qn % 2 == 0 else 2  # the next odd number: the dev half
        queries.append({"id": f"q{qn:03d}", "project": PROJECTS[prefix]["path"],
                        "category": q["category"], "query": q["query"],
                        "relevant": [f"{prefix}-{r:03d}" for r in q["relevant"]]})
    return {"version": 1, "projects": projects, "observations": observations, "queries": queries}
