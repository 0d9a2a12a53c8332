"""The results service: ingest cells over HTTP, keep their history, answer since when.

`python -m matrix serve` (see `server`) runs it; the pieces, each with one job:
`tables` (the SQLAlchemy Core schema), `migrations` (Alembic, the schema's history),
`database` (engines for SQLite and PostgreSQL, and migrating them), `auth` (hashed
tokens), `ingest` (from a posted body to validated rows), `storage` (writes),
`queries` (history and first-bad reads), `changes` (the change-point and what-changed
logic, pure), `svg` and `dashboard` (the HTML pages), `app` (the HTTP routes).

Its dependencies are in the `service` extra; `REQUIRES` says which.
"""
from __future__ import annotations

INSTALL_HINT = "the results service needs the 'service' extra: pip install 'tracematrix[service]'"
