"""`python -m matrix serve`: migrate the database, then serve the API and dashboard."""
from __future__ import annotations

import argparse
import sys
from typing import Any

DEFAULT_DB = "reports/history.sqlite"


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("serve", help="run the results service (history API and dashboard)",
                            description="Ingest cells over HTTP and serve their history.  Needs the "
                                        "'service' extra.")
    parser.add_argument("--db", default=DEFAULT_DB,
                        help=f"an SQLite file (default {DEFAULT_DB}) or postgresql://user:pw@host:port/db")
    parser.add_argument("--token-file", required=True,
                        help="tokens allowed to post, one a line (the token or sha256:<hex> of it)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--max-body-mb", type=float, default=32.0, help="largest cell accepted (default 32)")
    parser.add_argument("--window-days", type=float, default=14.0,
                        help="a change younger than this is 'open' on the dashboard (default 14)")
    parser.add_argument("--hash-token", action="store_true",
                        help="print the sha256: line of each token in --token-file (for the server's "
                             "copy) and exit")
    parser.add_argument("--log-level", default="info")


def _fail(message: str) -> int:
    print(f"python -m matrix serve: {message}", file=sys.stderr)
    return 2


def main(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from matrix.service import auth, database
        from matrix.service.app import create_app
    except ImportError as err:
        from matrix.service import INSTALL_HINT
        return _fail(f"{INSTALL_HINT} ({err})")
    if args.hash_token:
        try:
            print(auth.hashed_line(auth.read_client_token(args.token_file)))
        except auth.TokenFileError as err:
            return _fail(str(err))
        return 0
    try:
        tokens = auth.Tokens.from_file(args.token_file)
        engine = database.connect(args.db)
        revision = database.migrate(engine)
    except (auth.TokenFileError, database.DatabaseUrlError) as err:
        return _fail(str(err))
    except Exception as err:  # the database cannot be opened or migrated: say which and why
        return _fail(f"cannot open or migrate {args.db}: {type(err).__name__}: {err}")
    print(f"tracematrix history: {engine.url.render_as_string(hide_password=True)} at schema {revision}; "
          f"http://{args.host}:{args.port}/", flush=True)
    app = create_app(engine, tokens, max_body=int(args.max_body_mb * 1024 * 1024),
                     window_days=args.window_days)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0
