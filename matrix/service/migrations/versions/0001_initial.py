"""The first schema: cells, series, points, case_results.

Revision ID: 0001
Revises:
Create Date: 2026-11-01
"""
from alembic import op
import sqlalchemy as sa

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "cells",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(128), nullable=False),
        sa.Column("subject", sa.String(128), nullable=False),
        sa.Column("python", sa.String(128), nullable=False),
        sa.Column("backend", sa.String(128), nullable=False),
        sa.Column("machine", sa.String(128), nullable=False),
        sa.Column("timestamp", sa.String(32), nullable=False),
        sa.Column("schema_version", sa.Integer, nullable=False),
        sa.Column("cell_status", sa.Text, nullable=False),
        sa.Column("environment", sa.JSON, nullable=False),
        sa.Column("metric_versions", sa.JSON, nullable=False),
        sa.Column("case_count", sa.Integer, nullable=False),
        sa.Column("failed_count", sa.Integer, nullable=False),
        sa.Column("ir_total", sa.Float, nullable=True),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("report_url", sa.Text, nullable=True),
        sa.Column("posted_at", sa.String(32), nullable=False),
        sa.Column("posted_by", sa.String(16), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_cells"),
        sa.UniqueConstraint("run_id", "subject", "python", "backend", "machine",
                            name="uq_cells_run_id_subject_python_backend_machine"),
    )
    op.create_index("ix_cells_subject_timestamp_id", "cells", ["subject", "timestamp", "id"])
    op.create_index("ix_cells_run_id", "cells", ["run_id"])
    op.create_table(
        "series",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("subject", sa.String(128), nullable=False),
        sa.Column("case_name", sa.String(200), nullable=False),
        sa.Column("python", sa.String(128), nullable=False),
        sa.Column("backend", sa.String(128), nullable=False),
        sa.Column("metric", sa.String(64), nullable=False),
        sa.Column("machine", sa.String(128), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_series"),
        sa.UniqueConstraint("subject", "python", "backend", "machine", "case_name", "metric",
                            name="uq_series_subject_python_backend_machine_case_name_metric"),
    )
    op.create_table(
        "points",
        sa.Column("series_id", sa.Integer, nullable=False),
        sa.Column("cell_id", sa.Integer, nullable=False),
        sa.Column("value", sa.Float, nullable=True),
        sa.PrimaryKeyConstraint("series_id", "cell_id", name="pk_points"),
        sa.ForeignKeyConstraint(["series_id"], ["series.id"], name="fk_points_series_id_series"),
        sa.ForeignKeyConstraint(["cell_id"], ["cells.id"], name="fk_points_cell_id_cells"),
    )
    op.create_index("ix_points_cell_id", "points", ["cell_id"])
    op.create_table(
        "case_results",
        sa.Column("cell_id", sa.Integer, nullable=False),
        sa.Column("case_name", sa.String(200), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("ir_opcodes", sa.JSON, nullable=False),
        sa.Column("detail", sa.Text, nullable=True),
        sa.PrimaryKeyConstraint("cell_id", "case_name", name="pk_case_results"),
        sa.ForeignKeyConstraint(["cell_id"], ["cells.id"], name="fk_case_results_cell_id_cells"),
    )


def downgrade() -> None:
    op.drop_table("case_results")
    op.drop_index("ix_points_cell_id", table_name="points")
    op.drop_table("points")
    op.drop_table("series")
    op.drop_index("ix_cells_run_id", table_name="cells")
    op.drop_index("ix_cells_subject_timestamp_id", table_name="cells")
    op.drop_table("cells")
