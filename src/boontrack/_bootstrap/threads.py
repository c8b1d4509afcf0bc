"""Threads for the bootstrap's batches and groups, and BLAS held to one thread while a kernel runs.

The batches of resamples are drawn in the calling thread, in order, and evaluated on up to
:func:`thread_count` threads (:func:`evaluate_batches`): the kernels are numpy operations that release the
GIL, so the results are those of one thread whatever the count. Groups that each draw from their own generator
are summarized side by side on those threads (:func:`evaluate_groups`), which runs the draws in parallel too.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import functools
import itertools
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import Any

from threadpoolctl import ThreadpoolController

from boontrack._signals import before_batch, raise_if_stopped


@functools.cache
def _thread_pools() -> ThreadpoolController:
    """The thread pools of the loaded native libraries, found once (a search costs about a millisecond)."""
    return ThreadpoolController()


class _OneBlasThread:
    """BLAS limited to one thread while any kernel runs, in any thread; the limit found before is restored
    when the last one ends. A plain ``limit()`` per call is not enough with several threads: the first to end
    would restore the old limit under the others, and the last would leave its own limit behind for good.

    OpenBLAS ignores a limit set in another thread once the main thread has set one (measured with OpenBLAS
    0.3.31), so :func:`evaluate_batches` holds this in the calling thread while its threads run.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._limiter: Any = None

    def __enter__(self) -> None:
        with self._lock:
            if self._users == 0:
                self._limiter = _thread_pools().limit(limits=1, user_api="blas")
            self._users += 1

    def __exit__(self, *exc_info) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0:
                self._limiter.restore_original_limits()


_ONE_BLAS_THREAD = _OneBlasThread()


def one_blas_thread(kernel):
    """Run ``kernel`` with BLAS limited to one thread (restored afterwards; about 5 us per call).

    The kernels' matrix products are small (a batch of resamples by m + 1 ranks, times the budgets): BLAS
    threads gained no wall time and cost up to 9x the CPU on two cores, more with several processes each
    starting its own threads. More cores are used by evaluating batches in threads (:func:`evaluate_batches`).
    """

    @functools.wraps(kernel)
    def limited(*args, **kwargs):
        with _ONE_BLAS_THREAD:
            return kernel(*args, **kwargs)

    return limited


#: Threads that evaluate the batches of one bootstrap; None is every CPU this process may use.
_THREADS: ContextVar[int | None] = ContextVar("boontrack_threads", default=None)


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def thread_count() -> int:
    """The threads :func:`evaluate_batches` uses here (see :func:`using_threads`); one once the interpreter is
    shutting down (a summary written by an exit handler, as Hydra's callback does when a multirun stops early),
    where a thread pool takes no new work."""
    if not threading.main_thread().is_alive():
        return 1
    return _THREADS.get() or available_cpus()


@contextlib.contextmanager
def using_threads(threads: int | None) -> Iterator[None]:
    """Evaluate bootstrap batches on ``threads`` threads inside the block (None: every available CPU)."""
    token = _THREADS.set(threads)
    try:
        yield
    finally:
        _THREADS.reset(token)


def evaluate_batches(kernel: Callable[[Any], Any], batches: Iterable[Any]) -> list[Any]:
    """``kernel(batch)`` for each batch, in order, on up to :func:`thread_count` threads.

    The batches are drawn here, in the calling thread and in order, so the resamples and the results are those
    of one thread whatever the count. At most two batches per thread are drawn ahead: memory stays bounded. A
    single batch (every sweep of up to 400 runs at 10,000 resamples) starts no thread. Threads pay because the
    kernels are numpy operations that release the GIL: on two cores they cut the bootstrap's wall time 1.5-1.7x
    for 2-16 % more CPU time. Each batch looks before it starts whether a signal asked the work to stop
    (:func:`boontrack._signals.before_batch`): then the batches not started are cancelled, and only those
    running finish.
    """
    threads = thread_count()
    batches = iter(batches)
    head = list(itertools.islice(batches, 2))
    if threads == 1 or len(head) < 2:
        return [_started(kernel, batch) for batch in itertools.chain(head, batches)]
    results: list[Any] = []
    pending: collections.deque[Any] = collections.deque()
    with _ONE_BLAS_THREAD, ThreadPoolExecutor(threads, thread_name_prefix="boontrack") as pool:
        try:
            for batch in itertools.chain(head, batches):
                raise_if_stopped()  # in a thread other than the main one, which the signal does not interrupt
                pending.append(pool.submit(_started, kernel, batch))
                if len(pending) > 2 * threads:
                    results.append(pending.popleft().result())
            results.extend(future.result() for future in pending)
        finally:
            for future in pending:  # after a signal or an error: the batches not started never start
                future.cancel()
    return results


def _started(kernel: Callable[[Any], Any], batch: Any) -> Any:
    """``kernel(batch)``, unless a signal asked the work to stop before it started
    (:func:`boontrack._signals.before_batch` raises :class:`~boontrack._signals.Stopped`)."""
    before_batch()
    return kernel(batch)


def evaluate_groups(kernel: Callable[[Any], Any], groups: Sequence[Any]) -> Iterator[Any]:
    """``kernel(group)`` for each group, yielded in order, on up to :func:`thread_count` threads.

    For kernels whose random numbers are the group's own (a generator per group): each group's results are then
    those of one thread whatever the count. Each call runs in a copy of the caller's context (its thread count
    and, see :mod:`boontrack._collector`, its own collection of warnings), with the threads shared out among the
    groups running at once for its batches (:func:`evaluate_batches`). With one thread or one group, the calls run
    in the calling thread. Groups not started when the caller stops (an exception) are cancelled.
    """
    threads = thread_count()
    workers = min(threads, len(groups))
    if workers <= 1:
        yield from map(kernel, groups)
        return

    def run(group: Any) -> Any:
        raise_if_stopped()  # a group not started when a signal came never starts
        with using_threads(max(1, threads // workers)):
            return kernel(group)

    with _ONE_BLAS_THREAD, ThreadPoolExecutor(workers, thread_name_prefix="boontrack-group") as pool:
        futures = [pool.submit(contextvars.copy_context().run, run, group) for group in groups]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:
                future.cancel()
