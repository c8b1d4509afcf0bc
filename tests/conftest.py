"""Fixtures shared by the whole test suite."""

from __future__ import annotations

from pathlib import Path

import pytest

#: Real result tables published with the papers, beside the repository checkout (``<repo>/../shared/data``).
SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data directory; the test is skipped when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA
