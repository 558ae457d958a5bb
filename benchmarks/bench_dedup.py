"""Near-duplicate detection at corpus scale (issue 24): bloomkit's ``dedup`` (MinHash + the
Jaccard LSBF, LSHBloom's form) against datasketch's ``MinHashLSH``, in one run.

Corpus (texts no one here wrote): the definitions of the GCIDE dictionary (Debian package
``dict-gcide``, /usr/share/dictd/gcide.dict.dz; ``fortunes`` or a seeded synthetic corpus as
fallbacks, said in the output), plus near-duplicates made by seeded edits of randomly chosen
entries (5-30 % of the words inserted / deleted / swapped), each placed after its source in the
stream; the corpus' own repeats stay. Ground truth: for every text, the largest exact Jaccard
similarity of its shingle set (character 5-grams after lower-casing and collapsing whitespace,
as both methods see them) with any earlier text, over the candidate pairs of a 40 x 4 MinHash
banding (a pair at J >= 0.8 is missed with probability < 1e-9, at 0.6 < 0.005), checked
exactly.

Each method runs in a fresh child process that has loaded the texts: documents / s (shingling
and signatures included for both), peak RSS growth over the loaded texts (VmHWM after resetting
it), recall of the true near-duplicates (an earlier text at J >= threshold) and the false
duplicate rate (texts reported whose every earlier text is below the threshold, and below
threshold - 0.2, over the texts that are not near-duplicates). datasketch: ``MinHash(128)``
with ``update_batch`` of the same shingles, ``MinHashLSH(threshold, 128)``, query then insert.
bloomkit: ``dedup(texts, threshold)`` on one thread and on the default threads (the default
BBitIndex: bands from select_bbit_parameters, FNR <= 0.05 at t + 0.1 and FPR <= 0.05 at
t - 0.05 on the verified curve S(s) A(s), candidates verified by 256 MinHash values of 2 bits
with the acceptance count of bbit_cut),
and ``verify=False`` (the LSBF of select_jaccard_parameters' defaults: FNR <= 0.05 at t + 0.1,
FPR <= 0.05 at t - 0.2); on request (``--methods``) the LSBF with ``far_gap=0.1`` and with
one-permutation hashing (``method="oph"``). The ground truth is kept in ``--cache`` (a digest of
the texts names it).

Then the memory of one JaccardMLBFStar answering at 0.9 / 0.8 / 0.7 against three JaccardLSBFs
sized for the same targets (select_jaccard_parameters).

    python benchmarks/bench_dedup.py                 # 200,000 texts
    python benchmarks/bench_dedup.py --docs 20000    # a quick run
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bloomkit._bench import markdown_table, versions, write_results
from bloomkit.similarity import JaccardLSBF, JaccardMLBFStar, MinHasher, select_jaccard_parameters

GCIDE = Path("/usr/share/dictd/gcide.dict.dz")
FORTUNES = Path("/usr/share/games/fortunes")
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _b64(s: str) -> int:
    v = 0
    for ch in s:
        v = v * 64 + _B64.index(ch)
    return v


def base_texts() -> tuple[list[str], str]:
    """The corpus' own texts and its name."""
    if GCIDE.exists():
        data = gzip.open(GCIDE).read()
        spans = set()
        for line in Path(str(GCIDE).replace(".dict.dz", ".index")).read_text("utf-8", "replace").splitlines():
            parts = line.split("\t")
            if len(parts) == 3 and not parts[0].startswith("00-"):
                spans.add((_b64(parts[1]), _b64(parts[2])))
        texts = [" ".join(data[o : o + n].decode("utf-8", "replace").split()) for o, n in sorted(spans)]
        return [t for t in texts if len(t) >= 60], "gcide"
    if FORTUNES.exists():
        texts = []
        for f in sorted(FORTUNES.glob("*")):
            if f.suffix in ("", ".u8") and f.is_file() and not f.name.endswith(".dat"):
                texts += [" ".join(t.split()) for t in f.read_text("utf-8", "replace").split("\n%\n")]
        return [t for t in texts if len(t) >= 60], "fortunes"
    rng = random.Random(0)
    vocab = [f"w{i}" for i in range(20000)]
    return [" ".join(rng.choices(vocab, k=rng.randint(15, 80))) for _ in range(250_000)], "synthetic (seeded)"


def edit(text: str, rng: random.Random) -> str:
    """Insert / delete / swap 5-30 % of the words (seeded)."""
    words = text.split()
    for _ in range(max(1, int(len(words) * rng.uniform(0.05, 0.30)))):
        op = rng.randrange(3)
        i = rng.randrange(len(words)) if words else 0
        if op == 0 or len(words) < 2:
            words.insert(i, rng.choice(words) if words else "x")
        elif op == 1:
            del words[i]
        else:
            j = rng.randrange(len(words))
            words[i], words[j] = words[j], words[i]
    return " ".join(words)


def corpus(n: int, seed: int = 24) -> tuple[list[str], str]:
    """n texts: the corpus' own (in a seeded order) with edited copies after their sources."""
    base, name = base_texts()
    rng = random.Random(seed)
    rng.shuffle(base)
    n_edit = max(n // 5, n - len(base))
    base = base[: n - n_edit]
    stream: list[str] = list(base)
    inserts = sorted(((rng.randrange(i + 1, len(base) + 1), edit(base[i], rng))
                      for i in (rng.randrange(len(base) - 1) for _ in range(n_edit))), key=lambda x: -x[0])
    for pos, t in inserts:  # from the end: earlier positions stay valid; each copy after its source
        stream.insert(pos, t)
    return stream, name


def cached_ground_truth(texts: list[str], cache_dir: str | None) -> np.ndarray:
    """:func:`ground_truth`, kept in ``cache_dir`` under a digest of the texts (it is the slowest
    step of a run and depends on nothing but the corpus)."""
    if not cache_dir:
        return ground_truth(texts)
    digest = hashlib.sha256()
    for t in texts:
        digest.update(t.encode("utf-8") + b"\0")
    path = Path(cache_dir) / f"bench_dedup_truth_{len(texts)}_{digest.hexdigest()[:16]}.npy"
    if path.exists():
        return np.load(path)
    best = ground_truth(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, best)
    return best


def ground_truth(texts: list[str]) -> np.ndarray:
    """Largest exact Jaccard of each text with an earlier one (0 when none shares a band)."""
    mh = MinHasher(160, seed=12345)
    sig = mh.signatures(texts).reshape(len(texts), 40, 4)
    sets = mh.shingle_sets(texts)
    n = len(texts)
    cand: list[np.ndarray] = []
    for b in range(40):
        v = sig[:, b, :]
        key = (v[:, 0] * np.uint64(0x9E3779B97F4A7C15)) ^ (v[:, 1] * np.uint64(0xBF58476D1CE4E5B9)) \
            ^ (v[:, 2] * np.uint64(0x94D049BB133111EB)) ^ v[:, 3]
        key[(v == np.uint64(2**64 - 1)).all(axis=1)] = 0  # empty texts share nothing
        order = np.argsort(key, kind="stable")
        ks = key[order]
        starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
        ends = np.r_[starts[1:], n]
        for s, e in zip(starts, ends, strict=True):
            if e - s > 1 and ks[s] != 0:
                members = np.sort(order[s:e])
                for q in range(1, len(members)):  # each text against the up to 50 earlier members
                    earlier = members[max(0, q - 50) : q]
                    cand.append(members[q] * np.int64(n) + earlier)
    pairs = np.unique(np.concatenate(cand)) if cand else np.zeros(0, np.int64)
    best = np.zeros(n)
    for p in pairs.tolist():
        i, j = divmod(p, n)
        a, b = sets[i], sets[j]
        inter = np.intersect1d(a, b, assume_unique=True).size
        union = a.size + b.size - inter
        if union and inter / union > best[i]:
            best[i] = inter / union
    return best


# -- the methods, each in a child process ---------------------------------------------------------------


def _rss(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) * 1024
    return 0


BLOOMKIT_RUNS = {  # method -> dedup keyword arguments
    "bloomkit": {},
    "bloomkit-lsbf": {"verify": False},
    "bloomkit-steep": {"verify": False, "far_gap": 0.1},
    "bloomkit-oph": {"verify": False, "method": "oph"},
}


def child(method: str, path: str, threshold: float, out: str) -> None:
    texts_arrow = pq.read_table(path).column("text").combine_chunks()
    texts = texts_arrow.to_pylist() if method == "datasketch" else texts_arrow
    if method.startswith("bloomkit"):
        from bloomkit.similarity.dedup import dedup

        # warm up the compiled kernels on the input's own type (a first call per type compiles);
        # the filter / index of this call is thrown away
        dedup(texts_arrow.slice(0, 64), threshold=threshold, **BLOOMKIT_RUNS[method])  # type: ignore[arg-type]
    else:
        from datasketch import MinHash, MinHashLSH
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    before = _rss("VmRSS:")
    t0 = time.perf_counter()
    if method.startswith("bloomkit"):
        seen = dedup(texts, threshold=threshold, **BLOOMKIT_RUNS[method])  # type: ignore[arg-type]
    else:
        lsh = MinHashLSH(threshold=threshold, num_perm=128)
        seen = np.zeros(len(texts), dtype=bool)
        for i, t in enumerate(texts):
            norm = " ".join(t.lower().split())
            grams = {norm[p : p + 5] for p in range(len(norm) - 4)} or ({norm} if norm else set())
            if not grams:
                continue  # empty: never a duplicate (bloomkit's rule)
            m = MinHash(num_perm=128)
            m.update_batch([g.encode("utf-8") for g in grams])
            if lsh.query(m):
                seen[i] = True
            lsh.insert(i, m)
    dt = time.perf_counter() - t0
    peak = _rss("VmHWM:")
    np.save(out + ".npy", seen)
    Path(out + ".json").write_text(json.dumps({"seconds": dt, "rss_growth": peak - before}))


def run_child(method: str, path: str, threshold: float, threads: int | None) -> tuple[np.ndarray, dict[str, Any]]:
    out = tempfile.mktemp(prefix=f"dedup-{method}-")
    env = dict(os.environ)
    if threads is not None:
        env["BLOOMKIT_NUM_THREADS"] = str(threads)
    subprocess.run([sys.executable, __file__, "--child", method, path, str(threshold), out], check=True, env=env)
    seen = np.load(out + ".npy")
    meta = json.loads(Path(out + ".json").read_text())
    for ext in (".npy", ".json"):
        os.unlink(out + ext)
    return seen, meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=200_000)
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--methods", default=None, help="comma-separated, in order, of: datasketch, bloomkit, "
                    "bloomkit-threads, bloomkit-lsbf, bloomkit-steep, bloomkit-oph (default: the first four; ratios "
                    "need datasketch first)")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "bloomkit-bench-cache"),
                    help="folder for the ground truth of a corpus ('' : recompute)")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child[0], a.child[1], float(a.child[2]), a.child[3])
        return
    t = a.threshold
    t0 = time.perf_counter()
    texts, name = corpus(a.docs)
    print(f"corpus: {len(texts)} texts from {name} ({time.perf_counter() - t0:.0f} s)", flush=True)
    t0 = time.perf_counter()
    best = cached_ground_truth(texts, a.cache)
    true_dup = best >= t
    print(f"ground truth: {int(true_dup.sum())} near-duplicates at J >= {t} ({time.perf_counter() - t0:.0f} s)",
          flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "corpus.parquet")
        pq.write_table(pa.table({"text": pa.array(texts, pa.large_string())}), path)
        rows = []
        every = {"datasketch": ("datasketch MinHashLSH", "datasketch", None),
                 "bloomkit": ("bloomkit dedup (b-bit verified), 1 thread", "bloomkit", 1),
                 "bloomkit-threads": ("bloomkit dedup (b-bit verified), default threads", "bloomkit", None),
                 "bloomkit-lsbf": ("bloomkit dedup verify=False (LSBF), 1 thread", "bloomkit-lsbf", 1),
                 "bloomkit-steep": ("bloomkit dedup verify=False far_gap=0.1, 1 thread", "bloomkit-steep", 1),
                 "bloomkit-oph": ("bloomkit dedup verify=False method='oph', 1 thread", "bloomkit-oph", 1)}
        chosen = a.methods.split(",") if a.methods else ["datasketch", "bloomkit", "bloomkit-threads", "bloomkit-lsbf"]
        runs = [every[m] for m in chosen]
        for label, method, threads in runs:
            seen, meta = run_child(method, path, t, threads)
            neg = ~true_dup
            rows.append({
                "method": label, "docs": len(texts), "docs_per_s": round(len(texts) / meta["seconds"]),
                "seconds": round(meta["seconds"], 2), "rss_growth_MiB": round(meta["rss_growth"] / 2**20, 1),
                "recall": round(float(seen[true_dup].mean()), 4),
                "false_dup_rate": round(float((seen & neg).sum() / max(1, neg.sum())), 5),
                "false_dup_below_t-0.2": round(float((seen & (best < t - 0.2)).sum() / max(1, neg.sum())), 5),
                "reported": int(seen.sum()), "true_dups": int(true_dup.sum()),
            })
            print(rows[-1], flush=True)
    ds = rows[0] if rows and rows[0]["method"].startswith("datasketch") else None
    for r in rows[1:] if ds else []:
        r["throughput_x_datasketch"] = round(r["docs_per_s"] / ds["docs_per_s"], 1)
        r["memory_fraction_of_datasketch"] = round(r["rss_growth_MiB"] / max(ds["rss_growth_MiB"], 1e-9), 3)
        r["recall_minus_datasketch"] = round(r["recall"] - ds["recall"], 4)
    n = len(texts)
    star = JaccardMLBFStar.for_thresholds((0.9, 0.8, 0.7), n)
    singles = [JaccardLSBF.for_thresholds(x, n) for x in (0.9, 0.8, 0.7)]
    p3 = select_jaccard_parameters((0.9, 0.8, 0.7), n)
    memory = {
        "mlbf_star_bits": star.size_in_bits, "three_lsbf_bits": sum(s.size_in_bits for s in singles),
        "lsbf_bits": [s.size_in_bits for s in singles], "mlbf_star_rows_bands": [list(star.rows_by_level), star.bands],
        "lsbf_rows_bands": [[s.rows_by_level[0], s.bands] for s in singles],
        "mlbf_star_predicted_fnr": list(p3.predicted_fnr), "mlbf_star_predicted_fpr_far_sim": list(p3.predicted_lsh_fpr),
    }
    print(markdown_table(rows))
    print(json.dumps(memory))
    write_results("bench_dedup", rows, meta={"corpus": name, "threshold": t, "multi_threshold_memory": memory,
                                               "versions": versions(["datasketch", "numpy", "numba", "pyarrow"]),
                                               "load": os.getloadavg()}, out_dir=a.out)


if __name__ == "__main__":
    main()
