"""Alembic migrations of the service's schema (`matrix.service.tables`).

Applied by `matrix.service.database.migrate` when the service starts; a new schema
change is a new file in versions/ (`alembic revision` with this folder as script_location).
"""
