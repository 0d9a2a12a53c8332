"""The service's database schema (SQLAlchemy Core), the same on SQLite and PostgreSQL.

Alembic's migrations (`matrix/service/migrations/versions/`) create exactly these tables;
a test compares the two so that they cannot drift apart.

- `cells`: one row per posted cell; identity (run_id, subject, python, backend, machine).
  `timestamp` is UTC as fixed-width ISO text ('2026-01-01T00:00:00.000000Z'), so that
  text order is time order on every database.
- `series`: one row per history key (subject, case, python, backend, machine, metric).
- `points`: one value per series and cell (NULL where the case recorded no value).
- `case_results`: per cell and case, the status and the traced-opcode multiset, so that
  first-bad can say which opcodes account for a changed ir_count.
"""
from __future__ import annotations

import sqlalchemy as sa

ID_LENGTH = 128
CASE_LENGTH = 200
TIMESTAMP_LENGTH = 32

metadata = sa.MetaData(naming_convention={
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
})

cells = sa.Table(
    "cells", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("kind", sa.String(64), nullable=False),
    sa.Column("run_id", sa.String(ID_LENGTH), nullable=False),
    sa.Column("subject", sa.String(ID_LENGTH), nullable=False),
    sa.Column("python", sa.String(ID_LENGTH), nullable=False),
    sa.Column("backend", sa.String(ID_LENGTH), nullable=False),
    sa.Column("machine", sa.String(ID_LENGTH), nullable=False),
    sa.Column("timestamp", sa.String(TIMESTAMP_LENGTH), nullable=False),
    sa.Column("schema_version", sa.Integer, nullable=False),     # as posted, before any upgrade
    sa.Column("cell_status", sa.Text, nullable=False),
    sa.Column("environment", sa.JSON, nullable=False),
    sa.Column("metric_versions", sa.JSON, nullable=False),
    sa.Column("case_count", sa.Integer, nullable=False),
    sa.Column("failed_count", sa.Integer, nullable=False),
    sa.Column("ir_total", sa.Float, nullable=True),              # sum of the cases' ir_count
    sa.Column("digest", sa.String(64), nullable=False),          # sha256 of the upgraded document
    sa.Column("report_url", sa.Text, nullable=True),
    sa.Column("posted_at", sa.String(TIMESTAMP_LENGTH), nullable=False),
    sa.Column("posted_by", sa.String(16), nullable=False),       # which token (a prefix of its hash)
    sa.UniqueConstraint("run_id", "subject", "python", "backend", "machine"),
)
sa.Index(None, cells.c.subject, cells.c.timestamp, cells.c.id)
sa.Index(None, cells.c.run_id)

series = sa.Table(
    "series", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("subject", sa.String(ID_LENGTH), nullable=False),
    sa.Column("case_name", sa.String(CASE_LENGTH), nullable=False),
    sa.Column("python", sa.String(ID_LENGTH), nullable=False),
    sa.Column("backend", sa.String(ID_LENGTH), nullable=False),
    sa.Column("metric", sa.String(64), nullable=False),
    sa.Column("machine", sa.String(ID_LENGTH), nullable=False),
    # Serves both a cell's lookup of its column's series and a history query's.
    sa.UniqueConstraint("subject", "python", "backend", "machine", "case_name", "metric"),
)

points = sa.Table(
    "points", metadata,
    sa.Column("series_id", sa.Integer, sa.ForeignKey("series.id"), nullable=False),
    sa.Column("cell_id", sa.Integer, sa.ForeignKey("cells.id"), nullable=False),
    sa.Column("value", sa.Float, nullable=True),
    sa.PrimaryKeyConstraint("series_id", "cell_id"),
)
sa.Index(None, points.c.cell_id)

case_results = sa.Table(
    "case_results", metadata,
    sa.Column("cell_id", sa.Integer, sa.ForeignKey("cells.id"), nullable=False),
    sa.Column("case_name", sa.String(CASE_LENGTH), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("ir_opcodes", sa.JSON, nullable=False),
    sa.Column("detail", sa.Text, nullable=True),
    sa.PrimaryKeyConstraint("cell_id", "case_name"),
)
