"""`python -m matrix upload CELLS... --url U --token-file F`: post cell files to the service.

Standard library only (urllib), so that a CI job can post without the service extra.
Each file is posted on its own; one refused file is reported and the others still go.
Exit status: 0 when every file was stored (new or already there), 1 otherwise, 2 for bad
arguments.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

RETRIES = 3          # for 503 (database busy) and connection errors, with backoff


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("upload", help="post cell files to the results service")
    parser.add_argument("files", nargs="+", help="cell JSON files")
    parser.add_argument("--url", required=True, help="the service, e.g. https://history.example.org/")
    parser.add_argument("--token-file", required=True, help="a file holding the token (first line)")
    parser.add_argument("--report-url", default=None, help="where this run's HTML report is published")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request")


def endpoint(url: str, report_url: Optional[str] = None) -> str:
    target = url.rstrip("/") + "/api/v1/cells"
    return target + ("?" + urllib.parse.urlencode({"report_url": report_url}) if report_url else "")


def post(url: str, token: str, body: bytes, timeout: float = 60.0) -> Tuple[int, Dict[str, Any]]:
    """(HTTP status, the JSON answer) for one body; network errors raise OSError."""
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as err:
        text = err.read()
        try:
            answer = json.loads(text)
        except ValueError:
            answer = {"error": text.decode("utf-8", "replace")[:500]}
        return err.code, answer if isinstance(answer, dict) else {"error": str(answer)}


def upload_file(url: str, token: str, path: Path, timeout: float) -> Tuple[bool, str]:
    try:
        body = path.read_bytes()
    except OSError as err:
        return False, f"cannot read: {err.strerror or err}"
    for attempt in range(RETRIES):
        try:
            status, answer = post(url, token, body, timeout)
        except OSError as err:
            status, answer = 0, {"error": f"cannot reach {url}: {getattr(err, 'reason', err)}"}
        if status not in (0, 503) or attempt == RETRIES - 1:
            break
        time.sleep(2 ** attempt)
    if status in (200, 201):
        return True, f"{answer.get('stored')} ({answer.get('points')} points)"
    return False, f"HTTP {status or 'error'}: {answer.get('error', answer)}"


def main(args: argparse.Namespace) -> int:
    from matrix.service.auth import TokenFileError, read_client_token  # stdlib-only module
    try:
        token = read_client_token(args.token_file)
    except TokenFileError as err:
        print(f"python -m matrix upload: {err}", file=sys.stderr)
        return 2
    url = endpoint(args.url, args.report_url)
    failed: List[str] = []
    for name in args.files:
        ok, message = upload_file(url, token, Path(name), args.timeout)
        print(f"{name}: {message}", file=sys.stdout if ok else sys.stderr)
        if not ok:
            failed.append(name)
    print(f"uploaded {len(args.files) - len(failed)} of {len(args.files)} cell files")
    return 1 if failed else 0
