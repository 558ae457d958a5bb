"""Near-duplicate detection over a stream of texts (issue 24): ``dedup(texts)`` and the
``bloomkit dedup`` command.

Each text, in stream order, is reported as "seen before" when it is a near-duplicate (Jaccard
similarity of its shingle sets around ``threshold`` or above) of a text earlier in the stream;
every text is then stored, so a chain A ~ B ~ C reports B and C.

By default (``verify=True``) the structure is a :class:`~bloomkit.similarity.minhash_bbit.BBitIndex`:
MinHash bands find the candidates and b-bit minwise hashing (K_v = 256 values of 2 bits per
stored text) checks each candidate's agreement count against a cut at the threshold, so texts
just below it are rarely reported (the verified curve S(s) A(s) of
:func:`~bloomkit.similarity.minhash_bbit.verified_report_probability`). ``verify=False`` uses
this family's LSBF (:class:`~bloomkit.similarity.JaccardLSBF`, LSHBloom) sized by
:func:`~bloomkit.similarity.select_jaccard_parameters`: a Bloom filter alone, smaller, but its
S-curve reports many texts just below the threshold. You may also pass a filter (an MLBF /
MLBF* answers at the ``level`` you name, from several thresholds) or an index.

Rules: an empty or all-whitespace text is never a duplicate (and is kept by the CLI); a text
shorter than the shingle is one shingle; nulls raise InvalidParameterError naming the position
unless ``nulls="empty"`` (then they are empty texts); non-UTF-8 bytes raise
InvalidParameterError. Input: a list / tuple, numpy, pyarrow (array, chunked array, one-column
table), pandas or polars column, or :func:`dedup_parquet` for a column of a Parquet file read in
batches (memory: the filter and one batch). Dask collections are not supported yet.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import numpy as np

from .._engine.columns import as_keys, batch_len, slice_keys
from .._validation import Bool, Int, Options, check_path
from ..errors import InvalidParameterError
from .jaccard import JaccardLSBF, _JaccardFilter
from .minhash_bbit import BBitIndex

__all__ = ["dedup", "dedup_dask", "dedup_parquet", "make_filter", "make_index"]

_INDEX_KW = frozenset({"fnr", "fpr", "near_gap", "far_gap", "verify_perm", "bits", "seed", "shingle", "ngram",
                       "normalize"})
_FILTER_KW = frozenset({"fnr", "fpr", "verify_fpr", "near_gap", "far_gap", "seed", "shingle", "ngram", "method",
                        "normalize"})
Structure = BBitIndex | _JaccardFilter

BATCH = Int(1, 1 << 24)
NULLS = Options("error", "empty")


def make_filter(threshold: float, capacity: int, *, fnr: float = 0.05, fpr: float = 0.05, verify_fpr: float = 0.01,
                near_gap: float = 0.1, far_gap: float = 0.2, seed: int = 0, shingle: str = "char",
                ngram: int | None = None, method: str = "kway", normalize: bool = True) -> JaccardLSBF:
    """The filter :func:`dedup` builds: a :class:`JaccardLSBF` sized for one Jaccard
    ``threshold`` and ``capacity`` texts (FNR at threshold + near_gap <= fnr, FPR at
    threshold - far_gap <= fpr, texts unlike every stored one reported at most verify_fpr).

    Complexity: as :func:`~bloomkit.similarity.select_jaccard_parameters`.
    """
    return JaccardLSBF.for_thresholds(threshold, capacity, fnr=fnr, fpr=fpr, verify_fpr=verify_fpr,
                                      near_gap=near_gap, far_gap=far_gap, seed=seed, shingle=shingle, ngram=ngram,
                                      method=method, normalize=normalize)


def make_index(threshold: float, capacity: int, **kwargs: Any) -> BBitIndex:
    """The index :func:`dedup` builds by default: :meth:`BBitIndex.for_threshold` (keywords fnr,
    fpr, near_gap, far_gap, verify_perm, bits, seed, shingle, ngram, normalize).

    Complexity: as :func:`~bloomkit.similarity.minhash_bbit.select_bbit_parameters`.
    """
    return BBitIndex.for_threshold(threshold, capacity, **kwargs)


def _make(owner: str, threshold: float, capacity: int, verify: bool, kwargs: dict[str, Any]) -> Structure:
    allowed = _INDEX_KW if verify else _FILTER_KW
    bad = sorted(set(kwargs) - allowed)
    if bad:
        raise InvalidParameterError(
            f"The parameters {bad} of {owner} are not known with verify={verify}. Got them instead of "
            f"{', '.join(sorted(allowed))}" + (" ('method' and 'verify_fpr' size the unverified LSBF: pass "
                                               "verify=False)" if verify and {"method", "verify_fpr"} & set(bad)
                                               else "") + ".")
    return make_index(threshold, capacity, **kwargs) if verify else make_filter(threshold, capacity, **kwargs)


def _seen(f: Structure, part: Any, level: int) -> np.ndarray:
    if isinstance(f, BBitIndex):
        return f.seen_many(part)
    return f.seen_many(part, level)


class _Bar:
    """A progress bar on standard error (rich) when it is a terminal (BLOOMKIT_PROGRESS=1 forces
    it, 0 turns it off), as ``bloomkit build``'s."""

    def __init__(self, total: int | None, wanted: bool) -> None:
        force = os.environ.get("BLOOMKIT_PROGRESS", "")
        self.enabled = wanted and (force == "1" or (force != "0" and sys.stderr.isatty()))
        self.bar: Any = None
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.bar = Progress(TextColumn("dedup"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                console=Console(stderr=True, force_terminal=force == "1" or None), transient=True)
            self.task = self.bar.add_task("dedup", total=total)
            self.bar.start()

    def advance(self, n: int) -> None:
        if self.bar is not None:
            self.bar.advance(self.task, n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _fill_nulls(keys: Any, nulls: str) -> Any:
    if nulls == "empty":
        if isinstance(keys, list | tuple):
            return ["" if t is None else t for t in keys]
        if type(keys).__module__.startswith("pyarrow") and int(getattr(keys, "null_count", 0)) > 0:
            return keys.fill_null("" if not str(keys.type).endswith("binary") else b"")
        if type(keys).__module__.startswith("pandas"):
            return keys.fillna("")
    return keys


def dedup(texts: Any, *, threshold: float = 0.8, filter: Structure | None = None, level: int = 0,
          capacity: int | None = None, nulls: str = "error", batch_size: int = 1 << 12, progress: bool = False,
          verify: bool = True, **kwargs: Any) -> np.ndarray:
    """Bool array in stream order: is each text a near-duplicate of an earlier one?

    Parameters
    ----------
    texts
        The texts (see the module docstring); read in batches of ``batch_size``.
    threshold : float
        Jaccard threshold in (0, 1) of the filter built when ``filter`` is None.
    filter : BBitIndex, JaccardLSBF, JaccardMLBF or JaccardMLBFStar, optional
        Use (and fill) this index or filter instead; it may already hold texts ("seen before"
        then includes them). ``level`` chooses a filter's threshold (an index has one: level 0).
    capacity : int, optional
        Texts to size the filter for (default: the number of texts).
    nulls : {"error", "empty"}
        A null raises InvalidParameterError naming its position, or counts as an empty text.
    progress : bool
        A progress bar on standard error (when it is a terminal).
    verify : bool
        Build a :class:`BBitIndex` (True: candidates verified by b-bit MinHash) or a
        :class:`JaccardLSBF` (False) when ``filter`` is None.
    **kwargs
        Passed to :func:`make_index` (fnr, fpr, near_gap, far_gap, verify_perm, bits, seed,
        shingle, ngram, normalize) or, with ``verify=False``, :func:`make_filter` (fnr, fpr,
        verify_fpr, near_gap, far_gap, seed, shingle, ngram, method, normalize).

    Complexity: O(shingles K + n b (r + k')), K = r b (+ K_v) MinHash values per text.

    >>> texts = ["the quick brown fox jumps over the lazy dog near the river bank",
    ...          "the quick brown fox jumps over the lazy dog near the river bank!", "a different story", ""]
    >>> dedup(texts).tolist()
    [False, True, False, False]
    """
    own = "dedup"
    how = NULLS(nulls, "nulls", own)
    step = BATCH(batch_size, "batch_size", own)
    keys = texts if (isinstance(texts, list | tuple) and texts and isinstance(texts[0], set | frozenset)) \
        else as_keys(_fill_nulls(texts, how), "texts", own)
    n = batch_len(keys) if not isinstance(keys, tuple) else len(keys)
    if n is None:
        n = len(keys)
    if filter is not None and kwargs:
        raise InvalidParameterError(
            f"The parameters {sorted(kwargs)} of {own} size a new filter; a given 'filter' has its own. Got both instead.")
    f = filter if filter is not None else _make(own, threshold, max(1, capacity or n), Bool()(verify, "verify", own),
                                                kwargs)
    _check_structure(f, level, own)
    out = np.zeros(n, dtype=bool)
    bar = _Bar(n, progress)
    try:
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            part = keys[lo:hi] if isinstance(keys, list | tuple) else slice_keys(keys, lo, hi)
            out[lo:hi] = _seen(f, part, level)
            bar.advance(hi - lo)
    finally:
        bar.close()
    return out


def _check_structure(f: Any, level: int, owner: str) -> None:
    if not isinstance(f, Structure):
        raise InvalidParameterError(
            f"The 'filter' parameter of {owner} must be a BBitIndex, JaccardLSBF, JaccardMLBF or JaccardMLBFStar. "
            f"Got {type(f).__name__} instead.")
    if isinstance(f, BBitIndex) and not (isinstance(level, int) and not isinstance(level, bool) and level == 0):
        raise InvalidParameterError(
            f"The 'level' parameter of {owner} must be 0 for a BBitIndex (it has one threshold). Got {level!r} instead.")


def dedup_parquet(path: Any, column: str, *, threshold: float = 0.8, filter: Structure | None = None,
                  level: int = 0, nulls: str = "error", batch_size: int = 1 << 12, progress: bool = False,
                  verify: bool = True, **kwargs: Any) -> np.ndarray:
    """:func:`dedup` of one string column of a Parquet file, read in batches (row groups in file
    order are the stream order); the filter is sized for the file's row count.

    Complexity: as :func:`dedup`; memory: the filter and one batch.
    """
    import pyarrow.parquet as pq

    own = "dedup_parquet"
    how = NULLS(nulls, "nulls", own)
    step = BATCH(batch_size, "batch_size", own)
    pf = pq.ParquetFile(check_path(path, "path", own))
    if column not in pf.schema_arrow.names:
        raise InvalidParameterError(
            f"The 'column' parameter of {own} must name a column of {path}. Got {column!r} instead (columns: "
            f"{', '.join(pf.schema_arrow.names)}).")
    n = pf.metadata.num_rows
    if filter is not None and kwargs:
        raise InvalidParameterError(
            f"The parameters {sorted(kwargs)} of {own} size a new filter; a given 'filter' has its own. Got both instead.")
    f = filter if filter is not None else _make(own, threshold, max(1, n), Bool()(verify, "verify", own), kwargs)
    _check_structure(f, level, own)
    out = np.zeros(n, dtype=bool)
    pos = 0
    bar = _Bar(n, progress)
    try:
        for batch in pf.iter_batches(batch_size=step, columns=[column]):
            col = batch.column(0)
            if col.null_count and how == "error":
                first = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
                raise InvalidParameterError(
                    f"The {column!r} column of {path} must not contain nulls. Got {col.null_count} null(s) in a batch "
                    f"(first at row {pos + first}) instead; pass nulls='empty' (--nulls empty) to treat them as "
                    "empty texts.")
            out[pos : pos + len(col)] = dedup(col, filter=f, level=level, nulls=how, batch_size=step)
            pos += len(col)
            bar.advance(len(col))
    finally:
        bar.close()
    return out


def _partition_pass(template: Structure, part: Any, level: int, nulls: str, index: int) -> tuple[Any, Any]:
    """Phase 1 of :func:`dedup_dask` on a worker: the partition's own filter and its
    within-partition "seen before"."""
    from ..dask._build import in_partition

    f = template.empty_like(max(1, len(part))) if isinstance(template, BBitIndex) else template.copy()
    try:
        seen = dedup(part, filter=f, level=level, nulls=nulls)
    except InvalidParameterError as e:
        raise in_partition(e, index) from None
    return seen, f


def _cross_pass(earlier: Structure, part: Any, level: int, nulls: str, within: np.ndarray) -> np.ndarray:
    """Phase 2: near a text of an earlier partition (their filters' union), or of this one."""
    keys = as_keys(_fill_nulls(part, nulls), "texts", "dedup_dask")
    near = earlier.query_many(keys) if isinstance(earlier, BBitIndex) else earlier.query_many(keys, level)
    out: np.ndarray = within | near
    return out


def dedup_dask(texts: Any, *, threshold: float = 0.8, level: int = 0, nulls: str = "error",
               capacity: int | None = None, verify: bool = True, **kwargs: Any) -> np.ndarray:
    """:func:`dedup` of a dask collection of texts (a dask Series, Bag or 1-D Array), on the
    active distributed Client (or dask's local scheduler).

    Order of arrival: partition by partition, in the collection's order, and in each partition
    by position. Phase 1 (one task per partition, in parallel): the partition's texts against the
    ones before them in the same partition, into the partition's own index / filter F_i. On the
    client: the unions P_i = F_0 | ... | F_(i-1) (an index's texts concatenated, a filter's bits
    ORed). Phase 2 (in parallel): the partition's texts against P_i. A text is "seen before"
    when either pass says so. With ``verify=True`` (a :class:`BBitIndex`) that is exactly the
    answer of :func:`dedup` over the concatenated texts (a report is one verified pair); with
    ``verify=False`` too, except that a Bloom verification false positive needing bits from both
    an earlier partition and the text's own cannot occur (slightly fewer false positives). Every
    index / filter has the parameters :func:`make_index` / :func:`make_filter` choose for
    ``capacity`` (default: the row count, computed first). Returns the bool array in that order.

    Complexity: 2 signature passes (O(shingles K) each) and O(P m') for the P partitions' unions.
    """
    from ..dask._build import _partitions, dask_module

    own = "dedup_dask"
    how = NULLS(nulls, "nulls", own)
    dask = dask_module("dask")
    parts = _partitions(texts, "texts", own)
    if capacity is None:
        counts = dask.compute(*[dask.delayed(len)(p) for p in parts])
        capacity = int(sum(counts))
    template = _make(own, threshold, max(1, capacity), Bool()(verify, "verify", own), kwargs)
    if isinstance(template, BBitIndex):
        _check_structure(template, level, own)
    else:
        level = template._check_level(level, own)
    first = dask.compute(*[dask.delayed(_partition_pass)(template, p, level, how, i) for i, p in enumerate(parts)])
    prefixes = []
    acc = template
    for _, f in first:
        prefixes.append(acc)
        acc = acc | f
    second = dask.compute(*[dask.delayed(_cross_pass)(pre, p, level, how, seen)
                            for pre, p, (seen, _) in zip(prefixes, parts, first, strict=True)])
    return np.concatenate([np.asarray(x, dtype=bool) for x in second]) if second else np.zeros(0, bool)


def cli_run(args: Any) -> int:
    """``bloomkit dedup FILE --column text --threshold 0.8 -o kept.parquet``: the rows of FILE
    (Parquet, or a text file: one text per line) that are not near-duplicates of an earlier row,
    written as FILE's format; a summary on standard output."""
    import pyarrow as pa

    t0 = time.perf_counter()
    kw = dict(threshold=args.threshold, nulls=args.nulls, progress=True, seed=args.seed, shingle=args.shingle,
              ngram=args.ngram, fnr=args.fnr, fpr=args.fpr, verify=not args.no_verify)
    path = check_path(args.input, "FILE", "bloomkit dedup")
    is_parquet = path.endswith(".parquet") or path.endswith(".pq")
    if is_parquet:
        import pyarrow.parquet as pq

        if args.column is None:
            raise InvalidParameterError("bloomkit dedup: --column names the text column of a Parquet file")
        seen = dedup_parquet(path, args.column, **kw)
        if args.output:
            table = pq.read_table(path)
            pq.write_table(table.filter(pa.array(~seen)), args.output)
    else:
        with open(path, "rb") as fh:
            lines = fh.read().split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        seen = dedup(pa.array(lines, pa.binary()), **kw)
        if args.output:
            with open(args.output, "wb") as out:
                for line, dup in zip(lines, seen.tolist(), strict=True):
                    if not dup:
                        out.write(line + b"\n")
    n, d = int(seen.size), int(seen.sum())
    print(f"{n} rows, {d} near-duplicates (threshold {args.threshold}), {n - d} kept"
          + (f" -> {args.output}" if args.output else "") + f" in {time.perf_counter() - t0:.1f} s")
    return 0
