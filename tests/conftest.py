"""Fixtures shared by the whole test suite."""

from __future__ import annotations

from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
#: Real result tables published with the papers, beside the repository checkout (``<repo>/../shared/data``).
SHARED_DATA = REPOSITORY / ".." / "shared" / "data"
#: What the tools themselves keep in the checkout (virtual environment, caches); anything else a test leaves
#: there is a test writing into the user's working directory.
TOOL_LEFTOVERS = {".venv", ".hypothesis", ".pytest_cache", ".benchmarks", "__pycache__"}


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data directory; the test is skipped when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session", autouse=True)
def _checkout_left_clean():
    """Fail the run if the tests created anything in the repository's top directory (e.g. ./mlruns, ./wandb)."""
    before = {p.name for p in REPOSITORY.iterdir()}
    yield
    created = {p.name for p in REPOSITORY.iterdir()} - before - TOOL_LEFTOVERS
    assert not created, f"tests wrote into the checkout: {sorted(created)}"
