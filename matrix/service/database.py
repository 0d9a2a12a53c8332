"""Engines for the service's two databases, and bringing a database to the newest schema.

`--db` takes a file path or `sqlite:///FILE` (SQLite, the default: nothing to install)
or `postgresql://user:password@host:port/name` (PostgreSQL through psycopg 3).  Both
get the same schema from the same Alembic migrations.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# SQLite waits this long for another writer before giving up (a POST then fails with 503).
SQLITE_BUSY_TIMEOUT_S = 30
# Connection options that make a transaction take SQLite's write lock at BEGIN.
WRITE = {"tracematrix_write": True}


class DatabaseUrlError(ValueError):
    """--db names no database this service can use."""


def engine_url(db: str) -> str:
    """The SQLAlchemy URL for a --db argument (a bare path means an SQLite file)."""
    if "://" not in db:
        return f"sqlite:///{Path(db).expanduser().resolve()}"
    scheme, _, rest = db.partition("://")
    if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        return f"postgresql+psycopg://{rest}"
    if scheme == "sqlite":
        return db
    raise DatabaseUrlError(f"--db {db.split('://')[0]}://...: expected a file path, sqlite:///FILE "
                           f"or postgresql://user:password@host:port/database")


def _sqlite_setup(engine: sa.engine.Engine) -> None:
    """WAL (readers never wait for the writer), foreign keys on, and transactions that
    write take the write lock at BEGIN (BEGIN IMMEDIATE): a deferred transaction that read
    first could otherwise fail with 'database is locked' instead of waiting its turn."""

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None   # SQLAlchemy's 'begin' event issues BEGIN
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_S * 1000}")
        # A year of nightlies is about 1 GB: a 64 MB page cache per connection keeps the
        # cells table and the indexes' upper levels in memory; mmap saves a read() per page.
        cursor.execute("PRAGMA cache_size=-65536")
        cursor.execute("PRAGMA mmap_size=268435456")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(connection: sa.engine.Connection) -> None:
        write = connection.get_execution_options().get("tracematrix_write")
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def connect(db: str) -> sa.engine.Engine:
    """An engine for --db (no connection is opened yet)."""
    url = engine_url(db)
    if url.startswith("sqlite"):
        database = sa.engine.make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S,
                                                     "check_same_thread": False})
        _sqlite_setup(engine)
        return engine
    return sa.create_engine(url, pool_size=8, max_overflow=8, pool_pre_ping=True)


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def migrate(engine: sa.engine.Engine) -> str:
    """Apply every migration the database lacks; returns the revision it is now at."""
    config = alembic_config()
    with engine.connect().execution_options(**WRITE) as connection:
        with connection.begin():
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
        from alembic.migration import MigrationContext
        return MigrationContext.configure(connection).get_current_revision() or ""
