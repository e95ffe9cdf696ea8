"""The data preview carries what aideml's shows (``aide/utils/data_preview.py`` @ 9643875)."""

from pathlib import Path

import numpy as np
import pandas as pd

from sandmle.sandbox_scripts import probe


def test_preview_counts_every_row_and_lists_few_uniques_and_small_text_files(tmp_path: Path):
    n = 150_000  # over the 100k rows the preview used to stop at
    rng = np.random.default_rng(0)
    pd.DataFrame({"id": np.arange(1, n + 1), "cls": rng.choice(["a", "b", "c"], n),
                  "x": rng.random(n), "flag": rng.random(n) > 0.5}).to_csv(
        tmp_path / "train.csv", index=False)  # fmt: skip
    (tmp_path / "notes.txt").write_text("ids run 1..150000\nno leak here\n")
    (tmp_path / "big.txt").write_text("line\n" * 40)
    text = probe.preview(tmp_path)
    assert "train.csv: 150000 rows x 4 columns" in text  # aideml reads the whole file (:70)
    assert "id (int64): range [1, 150000], 0 missing" in text
    assert "cls (" in text and "3 unique values: [" in text  # nunique < 10 lists them (:95-98)
    assert "flag (bool): " in text and "% true" in text  # the share of true (:92-94)
    assert "notes.txt (2 lines)" in text and "ids run 1..150000" in text  # under 30 lines (:138)
    assert "big.txt (40 lines)" in text and "line\nline" not in text


def test_a_long_preview_falls_back_to_column_names(tmp_path: Path):
    wide = pd.DataFrame({f"feature_{i:03d}": np.arange(50) * i for i in range(120)})
    wide.to_csv(tmp_path / "wide.csv", index=False)
    text = probe.preview(tmp_path)
    assert len(text) <= probe.MAX_CHARS and "range [" not in text  # aideml's simple form (:148)
    assert "columns: feature_000, feature_001" in text and "... and 105 more" in text
