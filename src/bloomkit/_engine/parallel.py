"""Batch work on several threads.

numba kernels compiled with ``nogil=True`` run on disjoint slices of a batch in a small shared
thread pool; the calling thread takes the first slice itself. Measured on a 2-core machine:
1M-key Bloom add 17.9 -> 9.6 ns/key and queries 19 -> 10 ns/key with two threads; results are
identical for any number of threads (tested).

The number of threads is ``BLOOMKIT_NUM_THREADS`` from the environment, else the CPUs this
process may run on (at most 8); :func:`set_num_threads` changes it at run time. Batches below
``MIN_PER_THREAD`` keys per thread stay on the calling thread.

Filters add and query batches in one *chunked* pass (:func:`add_chunked`,
:func:`query_chunked`): a slice of ``CHUNK`` keys is hashed, then inserted or tested, then the
next; no array of the hashes of the whole batch is ever made, so ``add_many`` over n keys
takes the input, the filter and O(CHUNK) memory (plus the threads' private arrays, bounded by
:data:`PRIVATE_BYTES` and a fifth of the batch's own size).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .._validation import check_int
from ..errors import InvalidParameterError
from .boundary import KIND_PYTHON
from .columns import KeyBatch, as_keys
from .hashing import key_tags
from .lazy import kernels as K
from .storage import aligned_zeros

if TYPE_CHECKING:  # imported when the pool starts (concurrent.futures imports logging: ~10 ms)
    from concurrent.futures import Future, ThreadPoolExecutor

__all__ = [
    "CHUNK",
    "PRIVATE_BYTES",
    "PRIVATE_CHUNK",
    "add_chunked",
    "batch_writer",
    "chunk_bounds",
    "core_rebind",
    "get_num_threads",
    "hash_batch",
    "hashes_of",
    "key_source",
    "map_ranges",
    "query_chunked",
    "ranges",
    "set_num_threads",
    "writers_active",
]

T = TypeVar("T")

MIN_PER_THREAD = 1 << 15
_MAX_DEFAULT = 8
CHUNK = 1 << 16
"""Keys hashed and then inserted / tested at a time on the calling thread (512 KiB of hashes:
the allocator reuses the block, so no fresh pages per chunk)."""
PRIVATE_CHUNK = 1 << 18
"""Keys per step on the other threads: larger steps, fewer handovers of the GIL for the few
Python lines between two kernels."""
PRIVATE_BYTES = 1 << 28
"""At most 256 MB of private arrays for a threaded add (and at most a fifth of the batch's
own bytes: peak memory stays within 1.2 x (batch + filter) + O(CHUNK))."""

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_num_threads: int | None = None


def _default_threads() -> int:
    env = os.environ.get("BLOOMKIT_NUM_THREADS")
    if env:
        return check_int(int(env) if env.strip().isdigit() else env, "BLOOMKIT_NUM_THREADS",
                         "bloomkit", lo=1, hi=256)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, _MAX_DEFAULT))


def get_num_threads() -> int:
    """Threads used by batch methods (``add_many``, ``contains_many``, ``get_many``)."""
    global _num_threads
    if _num_threads is None:
        _num_threads = _default_threads()
    return _num_threads


def set_num_threads(n: int | None) -> None:
    """Use ``n`` threads for batch methods (1: no threads); None restores the default."""
    global _num_threads
    _num_threads = None if n is None else check_int(n, "n", "set_num_threads", lo=1, hi=256)


def _get_pool(workers: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size < workers:
            old = _pool
            from concurrent.futures import ThreadPoolExecutor

            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bloomkit")
            _pool_size = workers
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def _reset_after_fork() -> None:  # a forked child has the pool object but not its threads
    global _pool, _pool_size
    _pool, _pool_size = None, 0


os.register_at_fork(after_in_child=_reset_after_fork)


def ranges(n: int, min_per_thread: int | None = None) -> list[tuple[int, int]]:
    """Contiguous (lo, hi) slices of ``range(n)``, one per thread that has enough work
    (``min_per_thread`` keys, default :data:`MIN_PER_THREAD`, read at call time)."""
    per = MIN_PER_THREAD if min_per_thread is None else min_per_thread
    return split(n, max(1, min(get_num_threads(), n // max(1, per))))


def split(n: int, parts: int) -> list[tuple[int, int]]:
    """``range(n)`` as at most ``parts`` contiguous (lo, hi) slices of (nearly) equal size."""
    step = -(-n // max(1, parts)) if n else 1
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)] if n else [(0, 0)]


def chunk_bounds(lo: int, hi: int, size: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` cut into consecutive (a, b) steps of at most ``size``."""
    return [(a, min(hi, a + size)) for a in range(lo, hi, size)]


def map_ranges(fn: Callable[[int, int], T], parts: Sequence[tuple[int, int]]) -> list[T]:
    """``[fn(lo, hi) for (lo, hi) in parts]``, the first on this thread and the rest in the
    pool, all finished before returning; the first exception (in slice order) is raised."""
    if len(parts) == 1:
        return [fn(*parts[0])]
    pool = _get_pool(len(parts) - 1)
    futures: list[Future[T]] = [pool.submit(fn, lo, hi) for lo, hi in parts[1:]]
    results: list[Any] = []
    error: BaseException | None = None
    try:
        results.append(fn(*parts[0]))
    except BaseException as e:  # still wait for the others: they use the caller's arrays
        error = e
    for f in futures:
        try:
            results.append(f.result())
        except BaseException as e:
            error = error or e
    if error is not None:
        raise error
    return results


def hash_batch(
    batch: KeyBatch,
    hash_chunk: Callable[[KeyBatch], np.ndarray],
    then: Callable[[np.ndarray, int, int], T] | None = None,
) -> tuple[np.ndarray, list[tuple[int, int]], list[T]]:
    """Hash a batch (from :func:`key_source`) on several threads and run ``then(h1, lo, hi)``
    on each slice.

    numpy and pyarrow batches are hashed slice by slice on the threads (``hash_chunk`` on each
    slice, nogil kernels). A list was hashed whole at the door, on the calling thread: joining
    its str keys holds the GIL, and threads fighting for it made 1M-key list adds slower (58 ->
    72 ns/key); its ``then`` still runs on the threads. Returns (h1, slices, then's results in
    slice order). A bad key raises the error of hashing the whole batch on one thread (same
    message, positions counted in the whole batch).
    """
    parts = ranges(len(batch))
    threaded = len(parts) > 1 and not batch.hashed
    if threaded:
        h1 = np.empty(parts[-1][1], dtype=np.uint64)
    else:
        h1 = hash_chunk(batch)
        parts = ranges(len(h1))

    def job(lo: int, hi: int) -> T | None:
        if threaded:
            h1[lo:hi] = hash_chunk(batch.slice(lo, hi))
        return then(h1, lo, hi) if then is not None else None

    try:
        results = map_ranges(job, parts) if threaded or then is not None else []
    except InvalidParameterError as e:
        hash_chunk(batch)
        raise e
    return h1, parts, results  # type: ignore[return-value]


def hashes_of(batch: KeyBatch) -> np.ndarray:
    """The ``hash_chunk`` of a hashed batch (a list's hashes, or hashes a caller gives)."""
    return batch.data  # type: ignore[no-any-return]


def key_source(
    keys: Any, hash_fn: Callable[[Any], tuple[np.ndarray, int]], owner: str
) -> tuple[KeyBatch, Callable[[KeyBatch], np.ndarray]]:
    """The front door of a batch method: ``keys`` as a :class:`KeyBatch` (through
    :func:`bloomkit._engine.columns.as_keys`, errors naming ``owner``) and its ``hash_chunk``
    (a slice -> its hashes), for :func:`add_chunked`, :func:`query_chunked`, :func:`hash_batch`.
    ``hash_fn(batch) -> (hashes, tags)`` is the structure's hashing (e.g.
    :func:`bloomkit._engine.hashing.hash_keys` with its seed).

    numpy and pyarrow batches are hashed slice by slice later (their key types come from their
    type, read here once); a list is hashed whole here, so its bad keys raise before anything
    is inserted (8 bytes per key, small beside the list itself), and its hashes are sliced.
    """
    data = as_keys(keys, "keys", owner)
    if isinstance(data, list):
        h, tags = hash_fn(KeyBatch(data))
        return KeyBatch(h, tags, hashed=True), hashes_of
    return KeyBatch(data, key_tags(data) or 0), lambda part: hash_fn(part)[0]


def _refuse_nan(batch: KeyBatch, hash_chunk: Callable[[KeyBatch], np.ndarray]) -> None:
    """A float batch with NaN: ``hash_chunk`` of the prefix up to the first NaN (which raises
    the one-batch error, position included) before any chunk is inserted."""
    keys = batch.data
    if not batch.hashed and isinstance(keys, np.ndarray) and keys.dtype.kind == "f" and keys.ndim == 1:
        for a, b in chunk_bounds(0, len(keys), CHUNK):
            bad = np.flatnonzero(np.isnan(keys[a:b]))
            if bad.size:
                hash_chunk(batch.slice(0, a + int(bad[0]) + 1))


@contextmanager
def batch_writer(owner: Any) -> Iterator[None]:
    """Let this thread write ``owner``'s storage with kernels that release the GIL.

    Holds ``owner._lock`` (the filter's re-entrant lock) throughout and counts the writer in
    ``owner.__dict__["_bk_writers"]``. Single-key adds from other threads must not set bits in
    the same words meanwhile (a read-modify-write of a word beside a nogil writer can lose a
    bit): the compiled ``add`` is re-bound to the Python methods (``KIND_PYTHON``), whose
    ``_py_add`` takes the lock and so waits; single-key queries go on (``_py_contains``, no
    lock). On exit the storage is unbound and re-bound to the compiled path at the next call.
    The filter's ``_core_rebind`` binds ``KIND_PYTHON`` while a writer is counted
    (:func:`writers_active`) and checks again after binding. Other batch adds wait for the
    lock. Complexity: O(1).
    """
    with owner._lock:
        d = owner.__dict__
        d["_bk_writers"] = d.get("_bk_writers", 0) + 1
        bind = getattr(owner, "_core_bind", None)
        try:
            if bind is not None:
                bind(KIND_PYTHON, None, None, 1, 1, 0, 0, "")
            yield
        finally:
            if d["_bk_writers"] > 1:
                d["_bk_writers"] -= 1
            else:  # gone, not 0: a copy of the object's state never carries a writer
                del d["_bk_writers"]
            if bind is not None:
                owner._core_unbind()


def writers_active(owner: Any) -> bool:
    """True while a :func:`batch_writer` of ``owner`` is open (on any thread)."""
    return bool(owner.__dict__.get("_bk_writers"))


def core_rebind(owner: Any, bind_fast: Callable[[], None]) -> None:
    """``owner._core_rebind()`` of a filter written by :func:`add_chunked`: ``bind_fast()``
    (its compiled storage) unless a :func:`batch_writer` is open, then ``KIND_PYTHON``;
    repeated until the count of writers read before and after binding agree (a writer that
    opened meanwhile re-bound to KIND_PYTHON itself or will unbind at its end)."""
    while True:
        busy = writers_active(owner)
        if busy:
            owner._core_bind(KIND_PYTHON, None, None, 1, 1, 0, 0, "")
        else:
            bind_fast()
        if writers_active(owner) == busy:
            return


def add_chunked(
    batch: KeyBatch,
    hash_chunk: Callable[[KeyBatch], np.ndarray],
    insert: Callable[[np.ndarray, np.ndarray], None],
    storage: np.ndarray,
    owner: Any,
    *,
    probes_per_key: int = 1,
    refuse_nan: bool = True,
) -> None:
    """Insert a batch chunk by chunk, on several threads when it pays.

    ``hash_chunk(slice)`` gives the hashes of a slice of ``batch`` (:func:`key_source`, or a
    hashed batch with :func:`hashes_of`); ``insert(target, h)`` inserts them into ``target``
    (``storage`` or a private zeroed copy of it) with a kernel that releases the GIL. The
    whole batch runs inside :func:`batch_writer` of ``owner`` (the filter): the calling
    thread inserts its slice straight into ``storage``, ``CHUNK`` keys at a time, holding the
    filter's lock but not the GIL, so the other threads' few Python lines between their
    kernels never wait for it (the GIL-holding inserts made the worker wait ~83 % of its time:
    2 threads were slower than 1). Each other thread fills a private array, ORed into
    ``storage`` at the end (:func:`bloomkit._engine.kernels.or_into`); OR is commutative, so the
    words are identical for any number of threads. Concurrent single-key adds wait for the
    lock (:func:`batch_writer`), concurrent batch adds too: no bit is ever lost. Threads are
    used when the probes outnumber the storage words 4 to 1 (the merge costs a pass over the
    words) and their private arrays fit in ``min(PRIVATE_BYTES, batch bytes / 5)``
    (``PRIVATE_BYTES`` for a hashed batch: a list's objects take far more than its hashes).

    With ``refuse_nan``, a float batch holding NaN raises (through ``hash_chunk``) before
    anything is inserted; every other bad input fails on the first chunk of every slice.
    Memory: O(CHUNK) per thread beyond the private arrays. Complexity: O(n) hashing and
    inserting, O(threads * storage) for the private arrays.
    """
    n = len(batch)
    if refuse_nan:
        _refuse_nan(batch, hash_chunk)
    extra = len(ranges(n)) - 1
    if n * probes_per_key < 4 * storage.size:
        extra = 0
    # a list's objects take far more than its hashes: only PRIVATE_BYTES bounds its threads
    budget = PRIVATE_BYTES if batch.hashed else min(PRIVATE_BYTES, batch.nbytes // 5)
    extra = max(0, min(extra, budget // max(1, storage.nbytes)))

    def job(lo: int, hi: int) -> np.ndarray | None:
        if lo == 0:
            for a, b in chunk_bounds(lo, hi, CHUNK):
                insert(storage, hash_chunk(batch.slice(a, b)))
            return None
        private = aligned_zeros(storage.shape, storage.dtype, "a thread's private filter array")
        for a, b in chunk_bounds(lo, hi, PRIVATE_CHUNK):
            insert(private, hash_chunk(batch.slice(a, b)))
        return private

    with batch_writer(owner):
        for private in map_ranges(job, split(n, extra + 1)):
            if private is not None:
                K.or_into(storage, private)


def query_chunked(batch: KeyBatch, test_chunk: Callable[[KeyBatch], np.ndarray]) -> np.ndarray:
    """Bool array of ``test_chunk`` over a batch, ``CHUNK`` keys at a time, slices on several
    threads (the kernels release the GIL). A bad key raises the error of ``test_chunk`` on the
    whole batch (positions counted in the batch). Memory: the answers plus O(CHUNK) per
    thread. Complexity: O(n)."""
    n = len(batch)
    out = np.empty(n, dtype=np.bool_)

    def job(lo: int, hi: int) -> None:
        for a, b in chunk_bounds(lo, hi, CHUNK):
            out[a:b] = test_chunk(batch.slice(a, b))

    try:
        map_ranges(job, ranges(n))
    except InvalidParameterError as e:
        test_chunk(batch)
        raise e
    return out
