"""The data of the example sweeps: scikit-learn's bundled digits (no download), split 60/20/20 once."""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split


def split_digits() -> tuple[np.ndarray, ...]:
    """``x_train, x_val, x_test, y_train, y_val, y_test``, pixels scaled to [0, 1]."""
    x, y = load_digits(return_X_y=True)
    x = x / 16.0
    x_train, x_rest, y_train, y_rest = train_test_split(x, y, test_size=0.4, random_state=0, stratify=y)
    x_val, x_test, y_val, y_test = train_test_split(x_rest, y_rest, test_size=0.5, random_state=0, stratify=y_rest)
    return x_train, x_val, x_test, y_train, y_val, y_test
