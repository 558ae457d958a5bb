"""MLBF / MLBF* / LSBF batch queries vs exact "is any stored vector within r?" answers.

Setting of the issue: d = 20, k = 5, L = 6, n = 10^5 stored uniform vectors in [1, 1000]^20,
S = 3 levels. Timed (median of repeats after a warm-up): insertion of the n vectors, batch
queries per level (queries/s), and the exact peers on the same question:

* numpy brute force: squared distances to all n stored vectors in blocks, min <= r^2;
* scikit-learn NearestNeighbors (auto algorithm): distance to the nearest stored vector <= r.

Peers are far slower per query, so they answer a subset of the queries; rates are per query.
Half of the queries are near (a stored vector + a random offset of length 0.5 w), half far.

    python benchmarks/bench_similarity.py            # 10^6 queries
    python benchmarks/bench_similarity.py --quick    # 2 * 10^5 queries
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from bloomkit._bench import markdown_table, measure, versions, write_results
from bloomkit.similarity import LSBF, MLBF, MLBFStar

D, K, L, S = 20, 5, 6, 3
W = 1.0
N = 100_000


def brute_force(X: np.ndarray, Q: np.ndarray, r: float, block: int = 256) -> np.ndarray:
    """Exact answer: any stored row within distance r (numpy, blocked)."""
    xx = (X * X).sum(1)
    out = np.empty(len(Q), dtype=bool)
    for s in range(0, len(Q), block):
        q = Q[s : s + block]
        d2 = (q * q).sum(1)[:, None] + xx[None, :] - 2.0 * q @ X.T
        out[s : s + block] = d2.min(1) <= r * r
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    nq = 200_000 if args.quick else 1_000_000
    n_peer = 2_000 if args.quick else 10_000
    rng = np.random.default_rng(2026)
    X = rng.uniform(1, 1000, (N, D))
    u = rng.standard_normal((nq // 2, D))
    u *= 0.5 * W / np.linalg.norm(u, axis=1, keepdims=True)
    Q = np.vstack([X[rng.integers(0, N, nq // 2)] + u, rng.uniform(1, 1000, (nq - nq // 2, D))])
    rng.shuffle(Q)
    rows: list[dict[str, Any]] = []

    def make(cls: Any) -> Any:
        if cls is LSBF:
            return LSBF(D, W, and_width=K, num_bits=1 << 22, verify_bits=1 << 22, verify_hashes=4, seed=1,
                        domain=(0, 1001))
        return cls(D, W, num_levels=S, and_width=K, or_count=L, num_bits=1 << 22, verify_bits=1 << 23,
                   verify_hashes=4, seed=1, domain=(0, 1001))

    filters = {}
    for name, cls in (("MLBF", MLBF), ("MLBF*", MLBFStar), ("LSBF", LSBF)):
        holder: dict[str, Any] = {}
        t = measure(lambda holder=holder: holder["f"].add_many(X), repeats=3,
                    setup=lambda holder=holder, cls=cls: holder.__setitem__("f", make(cls)))
        f = make(cls)
        f.add_many(X)
        filters[name] = f
        rows.append({"structure": name, "operation": f"insert {N:,}", "median_s": t["median"],
                     "per_item_us": 1e6 * t["median"] / N, "items_per_s": N / t["median"],
                     "bits": f.size_in_bits, "ratio_vs_numpy": None})
    for name, f in filters.items():
        levels = range(S) if name != "LSBF" else [0]
        for lv in levels:
            def q(f: Any = f, lv: int = lv) -> Any:
                return f.query_many(Q, lv)

            t = measure(q, repeats=5)
            pos = float(q().mean())
            rows.append({"structure": name, "operation": f"query level {lv}", "median_s": t["median"],
                         "per_item_us": 1e6 * t["median"] / nq, "items_per_s": nq / t["median"],
                         "bits": f.size_in_bits, "positive_rate": pos, "ratio_vs_numpy": None})
    # exact peers on a subset, r = the level's width
    sub = Q[:n_peer]
    t_np = measure(lambda: brute_force(X, sub, W), repeats=3)
    np_rate = n_peer / t_np["median"]
    rows.append({"structure": "numpy brute force", "operation": f"query ({n_peer:,})",
                 "median_s": t_np["median"], "per_item_us": 1e6 / np_rate, "items_per_s": np_rate,
                 "bits": 64 * D * N, "ratio_vs_numpy": 1.0})
    try:
        from sklearn.neighbors import NearestNeighbors

        nn = NearestNeighbors(n_neighbors=1).fit(X)
        t_sk = measure(lambda: nn.kneighbors(sub, 1)[0][:, 0] <= W, repeats=3)
        sk_rate = n_peer / t_sk["median"]
        rows.append({"structure": "sklearn NearestNeighbors", "operation": f"query ({n_peer:,})",
                     "median_s": t_sk["median"], "per_item_us": 1e6 / sk_rate,
                     "items_per_s": sk_rate, "bits": None, "ratio_vs_numpy": sk_rate / np_rate})
    except ImportError:  # pragma: no cover
        sk_rate = None
    for r in rows:
        if r["operation"].startswith("query level"):
            r["ratio_vs_numpy"] = r["items_per_s"] / np_rate
            if sk_rate:
                r["ratio_vs_sklearn"] = r["items_per_s"] / sk_rate
    exact = brute_force(X, sub, W)
    for name, f in filters.items():
        got = f.query_many(sub, 0)
        rows.append({"structure": name, "operation": "agreement with exact r = w (level 0)",
                     "missed_true": int((exact & ~got).sum()), "extra_false": int((~exact & got).sum()),
                     "true_positives_exact": int(exact.sum())})
    meta = {"d": D, "k": K, "L": L, "S": S, "w": W, "n": N, "queries": nq, "peer_queries": n_peer,
            "versions": versions(["numpy", "numba", "scikit-learn"])}
    path = write_results("bench_similarity", rows, meta)
    print(markdown_table(rows))
    print(f"results: {path}")


if __name__ == "__main__":
    main()
