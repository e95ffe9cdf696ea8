"""Byte-stable media encoders: grey PNG images and 16-bit PCM WAV clips.

Both go through a library's writer with nothing time-dependent in the output, so the same
array always gives the same bytes (the synthetic generator and the MLE-bench replicas pin
their files by SHA-256).
"""

from __future__ import annotations

import io
import wave

import numpy as np
from PIL import Image

PCM_MAX = 32767


def png_bytes(pixels: np.ndarray) -> bytes:
    """A PNG of exactly these pixel values (a 2-D ``uint8`` array is a grey image)."""
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def pcm16(samples: np.ndarray) -> np.ndarray:
    """Float samples in [-1, 1] as little-endian 16-bit integers (rounded, clipped)."""
    return np.clip(np.round(samples * PCM_MAX), -PCM_MAX - 1, PCM_MAX).astype("<i2")


def wav_bytes(pcm: np.ndarray, rate: int) -> bytes:
    """A mono WAV file of 16-bit samples (the standard library's writer: no timestamps)."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(rate)
        handle.writeframes(np.asarray(pcm).astype("<i2").tobytes())
    return buffer.getvalue()


def read_wav(data: bytes) -> tuple[np.ndarray, int]:
    """Samples in [-1, 1) and the sample rate of a mono 16-bit PCM WAV."""
    with wave.open(io.BytesIO(data), "rb") as handle:
        rate, frames = handle.getframerate(), handle.readframes(handle.getnframes())
    return np.frombuffer(frames, dtype="<i2").astype(np.float64) / (PCM_MAX + 1), rate
