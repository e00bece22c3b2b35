"""Loader/validator for the hand-written retrieval eval set (bench/eval/dataset.json)."""
from __future__ import annotations

import datetime as _dt
import json
import os
import re

DEFAULT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dataset.json")

OBS_TYPES = {"bugfix", "feature", "refactor", "discovery", "decision", "change"}
CATEGORIES = {"paraphrase", "file", "error", "decision", "keyword", "temporal", "dated"}
_ISO_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
_OBS_STR = ("key", "project", "session", "created_at", "type", "title", "subtitle", "narrative")
_OBS_LIST = ("facts", "concepts", "files_read", "files_modified")


def _bad(what: str, msg: str) -> ValueError:
    return ValueError(f"dataset: {what}: {msg}")


def _check_iso_z(what: str, value: str) -> None:
    if not isinstance(value, str) or not _ISO_Z.match(value):
        raise _bad(what, f"created_at {value!r} is not ISO-8601 UTC with trailing Z")
    try:
        _dt.datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError as e:
        raise _bad(what, f"created_at {value!r} is not a valid date: {e}") from None


def validate(data: dict) -> dict:
    if not isinstance(data, dict):
        raise _bad("root", "expected a JSON object")
    if data.get("version") != 1:
        raise _bad("root", f"unsupported version {data.get('version')!r}")
    projects = data.get("projects")
    if not isinstance(projects, list) or not projects or len(set(projects)) != len(projects):
        raise _bad("projects", "must be a non-empty list of unique project paths")
    project_set = set(projects)

    obs = data.get("observations")
    if not isinstance(obs, list) or not obs:
        raise _bad("observations", "must be a non-empty list")
    by_key: dict[str, dict] = {}
    for i, o in enumerate(obs):
        what = f"observation #{i} ({o.get('key') if isinstance(o, dict) else '?'})"
        if not isinstance(o, dict):
            raise _bad(what, "not an object")
        for f in _OBS_STR:
            if not isinstance(o.get(f), str) or not o[f].strip():
                raise _bad(what, f"field {f!r} missing or empty")
        for f in _OBS_LIST:
            v = o.get(f)
            if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
                raise _bad(what, f"field {f!r} must be a list of non-empty strings")
        if o["key"] in by_key:
            raise _bad(what, f"duplicate key {o['key']!r}")
        if o["project"] not in project_set:
            raise _bad(what, f"unknown project {o['project']!r}")
        if o["type"] not in OBS_TYPES:
            raise _bad(what, f"invalid type {o['type']!r} (expected one of {sorted(OBS_TYPES)})")
        _check_iso_z(what, o["created_at"])
        by_key[o["key"]] = o

    queries = data.get("queries")
    if not isinstance(queries, list) or not queries:
        raise _bad("queries", "must be a non-empty list")
    seen_ids: set[str] = set()
    for i, q in enumerate(queries):
        what = f"query #{i} ({q.get('id') if isinstance(q, dict) else '?'})"
        if not isinstance(q, dict):
            raise _bad(what, "not an object")
        for f in ("id", "project", "category", "query"):
            if not isinstance(q.get(f), str) or not q[f].strip():
                raise _bad(what, f"field {f!r} missing or empty")
        if q["id"] in seen_ids:
            raise _bad(what, f"duplicate query id {q['id']!r}")
        seen_ids.add(q["id"])
        if q["project"] not in project_set:
            raise _bad(what, f"unknown project {q['project']!r}")
        if q["category"] not in CATEGORIES:
            raise _bad(what, f"invalid category {q['category']!r} "
                             f"(expected one of {sorted(CATEGORIES)})")
        rel = q.get("relevant")
        if not isinstance(rel, list) or not rel:
            raise _bad(what, "must have at least one relevant key")
        if len(set(rel)) != len(rel):
            raise _bad(what, "duplicate keys in relevant")
        for k in rel:
            if k not in by_key:
                raise _bad(what, f"relevant key {k!r} does not exist")
            if by_key[k]["project"] != q["project"]:
                raise _bad(what, f"relevant key {k!r} belongs to {by_key[k]['project']!r}, "
                                 f"not {q['project']!r}")
    return data


def load(path: str | None = None) -> dict:
    """Read and validate the eval set; raises ValueError naming the bad entry."""
    path = path or DEFAULT_PATH
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"dataset: {path}: invalid JSON: {e}") from None
    return validate(data)
