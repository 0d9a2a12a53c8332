"""Alembic's migrations build exactly the tables `matrix.service.tables` declares."""
from __future__ import annotations

from service_fakes import require_service

require_service()

import sqlalchemy as sa  # noqa: E402
from alembic.autogenerate import compare_metadata  # noqa: E402
from alembic.migration import MigrationContext  # noqa: E402

from matrix.service import database  # noqa: E402
from matrix.service.tables import metadata  # noqa: E402


def test_migrated_schema_matches_the_declared_tables(engine):
    with engine.connect() as conn:
        differences = compare_metadata(MigrationContext.configure(conn), metadata)
    assert differences == []
    assert set(sa.inspect(engine).get_table_names()) == {"alembic_version", *metadata.tables}


def test_migrating_again_changes_nothing(engine):
    assert database.migrate(engine) == "0001"
    assert database.migrate(engine) == "0001"


def test_bare_paths_mean_sqlite_and_postgres_urls_use_psycopg(tmp_path):
    assert database.engine_url(str(tmp_path / "h.db")) == f"sqlite:///{tmp_path / 'h.db'}"
    assert database.engine_url("postgresql://u:p@h:5/db") == "postgresql+psycopg://u:p@h:5/db"
    assert database.engine_url("postgres://h/db") == "postgresql+psycopg://h/db"
    try:
        database.engine_url("mysql://h/db")
    except database.DatabaseUrlError as err:
        assert "postgresql://" in str(err)
    else:
        raise AssertionError("mysql:// was accepted")


def test_an_sqlite_file_gets_its_folder(tmp_path):
    engine = database.connect(str(tmp_path / "new" / "folder" / "history.sqlite"))
    assert database.migrate(engine) == "0001"
    assert (tmp_path / "new" / "folder" / "history.sqlite").exists()
    engine.dispose()
