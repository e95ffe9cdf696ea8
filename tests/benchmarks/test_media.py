"""PNG and WAV encoding: exactly the pixels and samples given, the same bytes every time."""

from __future__ import annotations

import io
import struct

import numpy as np
from PIL import Image

from sandmle.benchmarks.media import pcm16, png_bytes, read_wav, wav_bytes


def test_a_png_holds_exactly_its_pixels_and_is_stable():
    pixels = np.random.default_rng(0).integers(0, 256, (7, 5)).astype(np.uint8)
    data = png_bytes(pixels)
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    image = Image.open(io.BytesIO(data))
    assert image.mode == "L" and image.size == (5, 7)
    assert (np.asarray(image) == pixels).all()
    assert png_bytes(pixels.copy()) == data


def test_pcm16_rounds_and_clips_to_16_bits():
    samples = np.array([0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 1e-5])
    assert pcm16(samples).tolist() == [0, 16384, -16384, 32767, -32767, 32767, -32768, 0]
    assert pcm16(samples).dtype == np.dtype("<i2")


def test_a_wav_is_a_bare_mono_16_bit_pcm_file():
    pcm = np.arange(-5, 5, dtype="<i2")
    data = wav_bytes(pcm, 2000)
    header = b"RIFF" + struct.pack("<I", 36 + 20) + b"WAVEfmt "
    header += struct.pack("<IHHIIHH", 16, 1, 1, 2000, 4000, 2, 16)  # PCM, mono, 2 bytes/frame
    header += b"data" + struct.pack("<I", 20)
    assert data == header + pcm.tobytes()


def test_float_samples_survive_a_wav_round_trip():
    samples = np.sin(np.linspace(0, 20, 300)) * 0.8
    back, rate = read_wav(wav_bytes(pcm16(samples), 3000))
    # written as x * 32767, read as n / 32768: within two steps of 16 bits
    assert rate == 3000 and np.allclose(back, samples, atol=2 / 32768)
