"""Fixtures for the HTTP front: the real storage actor (on the test's data directory),
session supervisor and event bus, ``Services``, a reader pool, the app and its in-process
test client. Everything runs on the real clock: the
storage actor works in threads, which autojump would skip over."""

from __future__ import annotations

import os
import time

import pytest
import trio
from http_helpers import PORT

from memlite.actors.bus import EventBus
from memlite.actors.core import spawn
from memlite.actors.session import SessionSupervisor
from memlite.actors.storage import StorageActor
from memlite.config import load_settings
from memlite.http import create_app, load_or_create_token
from memlite.services import Services
from memlite.storage.db import db_path
from memlite.storage.pool import ReaderPool


@pytest.fixture
async def storage(data_dir):
    async with spawn(StorageActor(data_dir).run) as ref:
        yield ref


@pytest.fixture
async def bus():
    async with spawn(EventBus(buffer=8).run) as ref:
        yield ref


@pytest.fixture
async def sessions():
    async with spawn(SessionSupervisor(stop_grace=0.5).run) as ref:
        yield ref


@pytest.fixture
def token(data_dir):
    return load_or_create_token(data_dir)


@pytest.fixture
async def services(data_dir, storage, sessions, bus, token):
    settings = load_settings(data_dir)
    assert settings.worker_port == PORT
    found = Services(
        settings=settings, data_dir=data_dir, db_path=db_path(data_dir), token=token,
        version="0.0.0-test", pid=os.getpid(), started_at=trio.current_time(),
        started_at_wall_ms=int(time.time() * 1000), storage=storage, sessions=sessions,
        bus=bus,
    )
    found.ready.set()
    return found


@pytest.fixture
async def readers(services):
    pool = ReaderPool(services.db_path)
    yield pool
    await pool.close()


@pytest.fixture
def app(services, readers):
    return create_app(services, readers=readers)


@pytest.fixture
def client(app):
    return app.test_client()
