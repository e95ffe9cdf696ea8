"""Pack secrets: the generation seed is salted with a secret that never ships with the tasks.

Answers depend on (secret, pack seed, task index, attempt). The task id reveals the index
and ``pack.yaml`` the seed, and the generator is importable in an agent's sandbox, so
without a secret a few seconds of brute force regenerate ``answers.csv``. The salt is four
32-bit words of SHA-256(secret): same secret and seed give the same bytes; a different or
missing secret gives different answers.

The secret lives on the private side: ``<pack>/generation/secret.txt`` (beside the tasks'
``generation/`` folders, never copied into a sandbox), or a file the user keeps elsewhere
(``synth generate --secret-file``). The built-in pack uses a public demo secret on purpose:
it must be reproducible from code, so it is a demo pack, not a hidden test set.
"""

from __future__ import annotations

import hashlib
import secrets
from pathlib import Path

from sandmle.errors import SandmleError

SECRET_FILE = "generation/secret.txt"
DEMO_SECRET = "sandmle-demo-pack-public-secret"
"""The built-in pack's secret: public, so that pack is reproducible (and not hidden)."""
MIN_LENGTH = 16


def salt_words(secret: str) -> list[int]:
    """Four 32-bit words of SHA-256(secret): the entropy prefix of every task."""
    digest = hashlib.sha256(secret.encode("utf-8")).digest()
    return [int.from_bytes(digest[i : i + 4], "big") for i in range(0, 16, 4)]


def new_secret() -> str:
    """A fresh random secret (128 bits, hex)."""
    return secrets.token_hex(16)


def read_secret(path: Path) -> str:
    """A secret from a file (surrounding whitespace ignored); too short is a user error."""
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise SandmleError(f"{path}: cannot read the secret file ({exc.strerror})") from None
    check_secret(text, str(path))
    return text


def check_secret(secret: str, where: str = "secret") -> None:
    if len(secret) < MIN_LENGTH:
        raise SandmleError(f"{where}: a pack secret needs at least {MIN_LENGTH} characters")


def write_secret(pack: Path, secret: str) -> Path:
    path = pack / SECRET_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(secret + "\n", encoding="utf-8")
    path.chmod(0o600)
    return path
