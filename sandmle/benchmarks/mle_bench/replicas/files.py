"""Byte-stable writers for the micro replicas: CSV, JSON, zip, tiny images and audio clips
(PNG and WAV encoding is :mod:`sandmle.benchmarks.media`'s).

Every writer gives the same bytes for the same input (no timestamps, sorted zip entries, a
fixed line terminator), so a replica regenerated with the same seed is identical on disk.
"""

from __future__ import annotations

import csv
import io
import json
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from sandmle.benchmarks import media
from sandmle.benchmarks.synthetic.modalities import image as synthetic_image

ZIP_DATE = (1980, 1, 1, 0, 0, 0)
"""Zip entries carry this date, so archives do not depend on when they were written."""
IMAGE_SIZE = 16
AUDIO_RATE = 2000
AUDIO_FRAMES = 200
HEX = "0123456789abcdef"


@dataclass(frozen=True)
class ReplicaDir:
    """One replica's folders and its random generator (seeded from the competition id)."""

    id: str
    root: Path
    rng: np.random.Generator

    @property
    def public(self) -> Path:
        return self.root / "prepared" / "public"

    @property
    def private(self) -> Path:
        return self.root / "prepared" / "private"


def replica_dir(out: Path, competition_id: str, seed: int) -> ReplicaDir:
    entropy = [seed, zlib.crc32(competition_id.encode())]
    return ReplicaDir(competition_id, out / competition_id, np.random.default_rng(entropy))


def write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def csv_bytes(frame: pd.DataFrame, quote_text: bool = False) -> bytes:
    """``frame`` as CSV; ``quote_text`` quotes every non-numeric field, as some Kaggle files do."""
    if quote_text:
        text = frame.to_csv(index=False, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
    else:  # pandas' default quoting: QUOTE_MINIMAL
        text = frame.to_csv(index=False, lineterminator="\n")
    return text.encode("utf-8")


def write_csv(path: Path, frame: pd.DataFrame, quote_text: bool = False) -> None:
    write_bytes(path, csv_bytes(frame, quote_text))


def json_bytes(data: object) -> bytes:
    return json.dumps(data, indent=4, ensure_ascii=False).encode("utf-8")


def write_zip(path: Path, entries: dict[str, bytes]) -> None:
    """A deflated zip of ``entries`` (archive name → bytes), sorted, with a fixed date."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, entries[name])
    write_bytes(path, buffer.getvalue())


def pixels(rng: np.random.Generator, size: int = IMAGE_SIZE) -> np.ndarray:
    """A grey image of a few shapes on noise, drawn by the synthetic generator's renderer."""
    k = int(rng.integers(1, 3))
    shapes = [str(s) for s in rng.choice(synthetic_image.SHAPES, k, replace=False)]
    return synthetic_image.render(size, shapes, rng)[0]


def image_bytes(rng: np.random.Generator, fmt: str, size: int = IMAGE_SIZE) -> bytes:
    """A tiny image file in ``fmt`` (PNG, JPEG, TIFF, BMP)."""
    buffer = io.BytesIO()
    Image.fromarray(pixels(rng, size)).convert("RGB").save(buffer, format=fmt)
    return buffer.getvalue()


def wav_bytes(rng: np.random.Generator) -> bytes:
    """A 0.1 s mono 16-bit WAV clip of noise."""
    return media.wav_bytes(rng.normal(0, 3000, AUDIO_FRAMES).astype("<i2"), AUDIO_RATE)


def _extended(value: int) -> bytes:
    """An integer as the 80-bit IEEE extended float AIFF uses for its sample rate."""
    exponent = value.bit_length() - 1
    mantissa = value << (63 - exponent)
    return struct.pack(">HQ", 16383 + exponent, mantissa)


def aiff_bytes(rng: np.random.Generator) -> bytes:
    """A 0.1 s mono 16-bit AIFF clip of noise (the whale challenge's ``.aif`` format)."""
    data = (rng.normal(0, 3000, AUDIO_FRAMES)).astype(">i2").tobytes()
    comm = struct.pack(">hLh", 1, AUDIO_FRAMES, 16) + _extended(AUDIO_RATE)
    ssnd = struct.pack(">LL", 0, 0) + data
    chunks = b"COMM" + struct.pack(">L", len(comm)) + comm
    chunks += b"SSND" + struct.pack(">L", len(ssnd)) + ssnd
    return b"FORM" + struct.pack(">L", 4 + len(chunks)) + b"AIFF" + chunks


def hex_ids(rng: np.random.Generator, n: int, length: int) -> list[str]:
    """``n`` distinct lower-case hex strings of ``length`` digits."""
    seen: dict[str, None] = {}
    while len(seen) < n:
        seen["".join(HEX[d] for d in rng.integers(0, 16, length))] = None
    return list(seen)


def both_classes(rng: np.random.Generator, n: int, rate: float = 0.4) -> np.ndarray:
    """0/1 labels with both classes present (ROC-AUC needs both)."""
    y = (rng.random(n) < rate).astype(np.int64)
    y[0], y[1] = 1, 0
    return rng.permutation(y)


def one_hot(rng: np.random.Generator, n: int, k: int, spread: int | None = None) -> np.ndarray:
    """An ``n × k`` integer one-hot matrix; the first ``spread`` classes each occur (and miss)."""
    classes = rng.integers(0, k, n)
    first = min(spread if spread is not None else 0, n)
    classes[:first] = np.arange(first) % k
    matrix = np.zeros((n, k), dtype=np.int64)
    matrix[np.arange(n), rng.permutation(classes)] = 1
    return matrix


def _crc32c_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        table.append(crc)
    return table


CRC32C_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), the checksum TFRecord framing uses."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = CRC32C_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked_crc(data: bytes) -> bytes:
    crc = crc32c(data)
    masked = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    return struct.pack("<I", masked)


def tfrecord_bytes(payloads: list[bytes]) -> bytes:
    """Records in TFRecord framing: length, its masked CRC-32C, the payload, its masked CRC."""
    out = bytearray()
    for payload in payloads:
        length = struct.pack("<Q", len(payload))
        out += length + _masked_crc(length) + payload + _masked_crc(payload)
    return bytes(out)
