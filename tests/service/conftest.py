"""Fixtures for the service: a migrated database on SQLite and on a real PostgreSQL.

PostgreSQL comes from TRACEMATRIX_TEST_POSTGRES_URL (an admin URL; each test gets its
own fresh database).  `bash .ci/run` starts a throw-away cluster and sets it, together
with TRACEMATRIX_REQUIRE_POSTGRES=1, which turns a missing server into a failure; a
developer without one sees the PostgreSQL variants skipped with the reason.
"""
from __future__ import annotations

import os
import uuid
import warnings
from typing import Iterator

import pytest
from service_fakes import REQUIRE_VARIABLE, TOKEN

# No service package is imported here, only inside the fixtures: each test module checks
# for them first (service_fakes.require_service), so that a missing extra skips those
# modules with the reason instead of breaking the whole run's collection.

POSTGRES_URL_VARIABLE = "TRACEMATRIX_TEST_POSTGRES_URL"


def postgres_admin_url() -> str:
    url = os.environ.get(POSTGRES_URL_VARIABLE)
    if url:
        return url
    reason = (f"no PostgreSQL server: set {POSTGRES_URL_VARIABLE} "
              f"(eval \"$(bash .ci/postgres start)\" starts a throw-away one)")
    if os.environ.get(REQUIRE_VARIABLE):
        pytest.fail(f"{REQUIRE_VARIABLE} is set but {reason}")
    pytest.skip(reason)
    raise AssertionError("unreachable")


def _fresh_postgres_database() -> Iterator[str]:
    import sqlalchemy as sa

    from matrix.service import database

    admin_url = postgres_admin_url()
    admin = sa.create_engine(database.engine_url(admin_url), isolation_level="AUTOCOMMIT")
    name = f"tm_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield admin_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "history.sqlite")
    else:
        yield from _fresh_postgres_database()


@pytest.fixture
def engine(db_url: str) -> Iterator["sa.engine.Engine"]:
    from matrix.service import database

    made = database.connect(db_url)
    database.migrate(made)
    yield made
    made.dispose()


@pytest.fixture
def tokens() -> "Tokens":
    from matrix.service.auth import Tokens, hash_token

    return Tokens([hash_token(TOKEN), hash_token("another-token")])


@pytest.fixture
def client(engine, tokens):
    with warnings.catch_warnings():
        # Starlette 1.x would rather have httpx2 (3.10+ only); httpx serves every interpreter.
        warnings.filterwarnings("ignore", message=".*httpx2")
        from starlette.testclient import TestClient

    from matrix.service.app import create_app

    with TestClient(create_app(engine, tokens, max_body=1024 * 1024)) as made:
        yield made

