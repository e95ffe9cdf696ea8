"""Tables the app computed, kept per server so that a rerun (a click, a reload) reuses them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

T = TypeVar("T")


@st.cache_resource
def _tables_memo() -> dict[tuple, tuple[pd.DataFrame, Any]]:
    # Computed tables of this server, by what they were computed from: a rerun (a click, a
    # reload) with the same logs and filters recomputes none of them.
    return {}


MEMO_ENTRIES = 256


def memo(name: str, source: pd.DataFrame, params: tuple, compute: Callable[[], T]) -> T:
    """``compute()``, kept until ``source`` (the frame it derives from) is replaced."""
    store = _tables_memo()
    key = (name, id(source), params)
    hit = store.get(key)
    if hit is not None and hit[0] is source:  # the same frame, not one that reused its id
        return hit[1]
    if len(store) >= MEMO_ENTRIES:
        store.clear()
    value = compute()
    store[key] = (source, value)
    return value
