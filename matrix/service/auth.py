"""Bearer tokens: kept only as SHA-256 hashes, compared in constant time.

The token file has one token per line (blank lines and '#' comments ignored).  A line
may hold the token itself or `sha256:<hex digest>`, so that the server's copy need not
contain any token at all (`python -m matrix serve --hash-token` prints the line).
Tokens are random strings of high entropy, not passwords: a plain SHA-256 is the right
hash (a slow password hash would add nothing but latency to every POST).
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path
from typing import List, Optional, Union

PREFIX = "sha256:"


class TokenFileError(ValueError):
    """The token file is missing, unreadable or holds no token."""


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def hashed_line(token: str) -> str:
    """The token-file line that admits `token` without containing it."""
    return PREFIX + hash_token(token).hex()


def new_token() -> str:
    return secrets.token_urlsafe(32)


def _token_lines(path: Union[str, Path]) -> List[str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise TokenFileError(f"token file {path}: cannot read ({getattr(err, 'strerror', None) or err})") from None
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def read_client_token(path: Union[str, Path]) -> str:
    """The token a client sends: the first token in its token file."""
    lines = _token_lines(path)
    if not lines or lines[0].startswith(PREFIX):
        raise TokenFileError(f"token file {path}: no token in it (a client needs the token itself, "
                             f"not its {PREFIX} hash)")
    return lines[0]


class Tokens:
    """The set of accepted tokens, as hashes."""

    def __init__(self, hashes: List[bytes]) -> None:
        if not hashes:
            raise TokenFileError("no token configured: every POST would be refused")
        self._hashes = list(hashes)

    @classmethod
    def from_file(cls, path: Union[str, Path]) -> "Tokens":
        hashes = []
        for number, line in enumerate(_token_lines(path), 1):
            if line.startswith(PREFIX):
                try:
                    digest = bytes.fromhex(line[len(PREFIX):])
                except ValueError:
                    digest = b""
                if len(digest) != 32:
                    raise TokenFileError(f"token file {path}, line {number}: {PREFIX} must be followed "
                                         f"by 64 hex digits")
                hashes.append(digest)
            else:
                hashes.append(hash_token(line))
        if not hashes:
            raise TokenFileError(f"token file {path}: no token in it")
        return cls(hashes)

    def check(self, authorization: Optional[str]) -> Optional[str]:
        """The label of the token in an `Authorization: Bearer ...` header, or None.

        Every stored hash is compared (hmac.compare_digest, no early exit), so the time
        taken says nothing about which token, or how much of one, matched."""
        if not authorization:
            return None
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        presented = hash_token(token.strip())
        matched: Optional[bytes] = None
        for stored in self._hashes:
            if hmac.compare_digest(presented, stored):
                matched = stored
        return matched.hex()[:12] if matched is not None else None
