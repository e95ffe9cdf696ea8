"""Who may reach a server sandmle starts: loopback by default, a token on any other address.

The leaderboard app and the environment server share these rules.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets

DEFAULT_HOST = "127.0.0.1"


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine (``localhost`` or a loopback address)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    return secrets.token_urlsafe(24)


def token_ok(given: str | None, expected: str | None) -> bool:
    """No token expected (loopback), or ``given`` equals it (compared in constant time)."""
    if not expected:
        return True
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())
