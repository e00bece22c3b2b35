"""The worker's HTTP front: the Quart-Trio app, its auth, and the API blueprints.

``create_app(services)`` builds the app the worker's root serves with Hypercorn;
``load_or_create_token(data_dir)`` makes or reads the install's API token. The rules of
who may call what are in ``auth.py``; every route's request and response shapes are in
the docstrings of ``api.py``, ``read_api.py`` and ``stream.py``.
"""

from memlite.http.app import MAX_BODY_BYTES, create_app
from memlite.http.auth import PUBLIC_ENDPOINTS
from memlite.http.credentials import TOKEN_FILE, cookie_name, cookie_value, load_or_create_token

__all__ = [
    "MAX_BODY_BYTES",
    "PUBLIC_ENDPOINTS",
    "TOKEN_FILE",
    "cookie_name",
    "cookie_value",
    "create_app",
    "load_or_create_token",
]
