"""Helpers for the HTTP tests: request headers and seeding the database."""

from __future__ import annotations

from memlite.actors.core import ActorRef
from memlite.actors.storage import StartSession, StoreObservation
from memlite.storage.records import NewObservation

PORT = 37888  # the default WORKER_PORT: what the test client's Host must name
HOST = f"127.0.0.1:{PORT}"
ORIGIN = f"http://{HOST}"


def headers(token: str | None = None, *, host: str = HOST, **extra: str) -> dict[str, str]:
    """Request headers: our Host, and a bearer token when given."""
    found = {"Host": host}
    if token is not None:
        found["Authorization"] = f"Bearer {token}"
    found.update({key.replace("_", "-"): value for key, value in extra.items()})
    return found


# --- seeding -----------------------------------------------------------------------------


async def seed_session(storage: ActorRef, session_id: str, project: str = "/p/alpha") -> None:
    await storage.ask(lambda reply: StartSession(session_id=session_id, project=project,
                                                 project_name=project.rsplit("/", 1)[-1],
                                                 reply=reply), timeout=5)


async def seed_observation(storage: ActorRef, session_id: str, *, title: str,
                           project: str = "/p/alpha", at_ms: int, narrative: str = "",
                           type: str = "discovery") -> int:
    obs = NewObservation(session_id=session_id, project=project, type=type, title=title,
                         narrative=narrative or f"narrative of {title}", facts=(f"fact {title}",),
                         at_ms=at_ms)
    result = await storage.ask(lambda reply: StoreObservation(observation=obs, reply=reply),
                               timeout=5)
    return result.id
