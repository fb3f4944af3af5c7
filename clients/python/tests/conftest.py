"""Test setup: the package from this checkout, and the servers clients/ci.sh starts.

TOOLSCORE_URL is a server on a fresh database, TOOLSCORE_TINY_URL one with
one worker and a queue of one (for 429s), TOOLSCORE_OTEL_URL one whose
OpenTelemetry ingest grades a trace 200 ms after its last span and keeps
unmatched traces; TOOLSCORE_API_KEY, TOOLSCORE_TINY_API_KEY and
TOOLSCORE_OTEL_API_KEY their keys (every scope but admin),
TOOLSCORE_ADMIN_KEY their bootstrap admin key. Without them the server
tests are skipped, unless CI=true, where a missing server is a failure.
"""

import json
import os
import pathlib
import sys
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))

from toolscore_client import Client  # noqa: E402

RUN_TAG = format(int(time.time() * 1000), "x") + os.urandom(2).hex()
"""A suffix that keeps this run's names apart from earlier runs' on the same server."""


def repo_json(path):
    """A file of the repository, decoded."""
    return json.loads((REPO / path).read_text(encoding="utf-8"))


def _server(name):
    url = os.environ.get(name)
    if url:
        return url
    if os.environ.get("CI") == "true":
        pytest.fail(f"{name} is not set: clients/ci.sh starts the test servers")
    pytest.skip(f"{name} is not set (clients/ci.sh starts the test servers)")


@pytest.fixture
def client():
    """A client of TOOLSCORE_URL."""
    return Client(_server("TOOLSCORE_URL"), api_key=os.environ.get("TOOLSCORE_API_KEY") or None)


@pytest.fixture
def tiny_client_args():
    """(URL, key) of TOOLSCORE_TINY_URL: one worker, a queue of one."""
    return _server("TOOLSCORE_TINY_URL"), os.environ.get("TOOLSCORE_TINY_API_KEY") or None


@pytest.fixture
def otel_client():
    """A client of TOOLSCORE_OTEL_URL, whose OpenTelemetry ingest grades a trace 200 ms after its last span and keeps unmatched traces."""
    return Client(_server("TOOLSCORE_OTEL_URL"), api_key=os.environ.get("TOOLSCORE_OTEL_API_KEY") or None)


@pytest.fixture
def admin_key():
    """The bootstrap admin key of the servers."""
    key = os.environ.get("TOOLSCORE_ADMIN_KEY")
    if not key:
        pytest.skip("TOOLSCORE_ADMIN_KEY is not set (the server runs without keys)")
    return key
