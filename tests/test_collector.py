"""boontrack's warnings collected per context (per thread), without touching the process's warning filters."""

from __future__ import annotations

import threading
import warnings

import pytest

from boontrack._collector import collected, warn
from boontrack.exceptions import FewRunsWarning


def test_threads_collecting_at_once_each_keep_their_own_warnings_in_order():
    """Two threads warn in turn, each inside its own collection: each keeps exactly its own, in order, once."""
    turns = [threading.Event() for _ in range(4)]
    kept: dict[str, list[str]] = {}

    def collect(name: str, mine: tuple[int, ...]) -> None:
        with collected() as messages:
            for turn in mine:
                if turn:  # after the other thread's previous turn
                    turns[turn - 1].wait(timeout=10)
                warn(f"{name} at turn {turn}", FewRunsWarning)
                warn(f"{name} at turn {turn}", FewRunsWarning)  # once in the collection
                turns[turn].set()
        kept[name] = messages

    threads = [threading.Thread(target=collect, args=args) for args in (("a", (0, 2)), ("b", (1, 3)))]
    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    assert kept == {"a": ["a at turn 0", "a at turn 2"], "b": ["b at turn 1", "b at turn 3"]}
    assert escaped == []


def test_other_warnings_and_warnings_outside_a_collection_go_to_warnings_warn():
    with collected() as messages, pytest.warns(RuntimeWarning, match="not boontrack's"):
        warn("not boontrack's", RuntimeWarning)
    assert messages == []
    with pytest.warns(FewRunsWarning, match="nobody collects") as record:
        warn("nobody collects", FewRunsWarning)
    assert record[0].filename == __file__  # stacklevel 1 points at the caller of warn
