"""Start-up and streaming of the ``bloomkit`` command (issue 25): what a user waits for.

Cold (a whole new process, as a shell runs it; wall seconds, min / median / max of ``--repeats``
runs after one warm-up run, all commands interleaved so that a drift of the machine hits all;
Python's bytecode cached by the warm-up run, as on a user's machine after the first run):

* ``python -c pass`` (the interpreter's floor), ``python -c "import numpy"``,
  ``python -c "import bloomkit"`` (target <= 0.15 s), ``python -c "import numba"``;
* ``bloomkit query FILE KEY`` of a Bloom, split-block and counting file (target <= 0.4 s);
* ``bloomkit info FILE --timing`` (reports numba's start-up inside the process);
* the peer: a script that loads a saved rbloom filter and asks one key (``pip install -e
  '.[bench]'``; left out, and said so, when rbloom is missing).

Warm (inside one process, after a warm-up): ``bloomkit.load`` + one ``in`` of each file, and the
first vs the second ``contains_many`` (the first pays numba's start-up: importing it and loading
the cached kernels).

Streaming: ``bloomkit build`` of N text lines from a file and from a pipe (wall seconds and the
peak RSS of the process, MiB: what a build holds beyond its structure), and of an endless stream
of one repeated key cut after N lines (peak RSS must not grow with N).

    python benchmarks/bench_cli.py              # 9 repeats, 2M-line builds
    python benchmarks/bench_cli.py --quick      # 3 repeats, 200k-line builds
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bloomkit._bench import markdown_table, measure, versions, write_results

PY = sys.executable
BLOOMKIT = shutil.which("bloomkit", path=str(Path(PY).parent)) or "bloomkit"


# forks and execs the command, then reports its peak RSS and wall time: subprocess starts children
# with vfork, whose RSS high-water mark starts at the parent's (this benchmark's); a fork of this
# small launcher starts at the launcher's
_LAUNCHER = ("import os, sys, time\nt = time.perf_counter()\npid = os.fork()\nif pid == 0:\n"
             "    os.execv(sys.argv[1], sys.argv[1:])\n_, status, usage = os.wait4(pid, 0)\n"
             "print(time.perf_counter() - t, usage.ru_maxrss, os.waitstatus_to_exitcode(status))\n")


def run_once(cmd: list[str], stdin: Any = subprocess.DEVNULL) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit status) of one whole process (timed from its fork)."""
    p = subprocess.run([PY, "-c", _LAUNCHER, shutil.which(cmd[0]) or cmd[0], *cmd[1:]], stdin=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    wall, peak, code = p.stdout.split()[-3:]
    return float(wall), int(peak) / 1024, int(code)


def cold(commands: dict[str, list[str]], repeats: int) -> list[dict[str, Any]]:
    """Every command ``repeats`` times, interleaved, after one warm-up run each."""
    for cmd in commands.values():
        run_once(cmd)
    walls: dict[str, list[float]] = {k: [] for k in commands}
    peaks: dict[str, float] = {}
    for _ in range(repeats):
        for name, cmd in commands.items():
            wall, peak, code = run_once(cmd)
            if code != 0:
                raise SystemExit(f"{name}: exit {code}: {' '.join(cmd)}")
            walls[name].append(wall)
            peaks[name] = max(peaks.get(name, 0.0), peak)
    base = statistics.median(walls["python -c pass"])
    return [{"command": k, "min s": min(v), "median s": statistics.median(v), "max s": max(v),
             "median - pass s": statistics.median(v) - base, "peak MiB": peaks[k]} for k, v in walls.items()]


def make_files(folder: Path) -> dict[str, Path]:
    import bloomkit

    out = {}
    for cls in (bloomkit.BloomFilter, bloomkit.SplitBlockBloomFilter, bloomkit.CountingBloomFilter):
        f = cls(capacity=1_000_000, fpr=0.01)
        f.add_many([f"key-{i}" for i in range(100_000)])
        out[cls.__name__] = folder / f"{cls.__name__}.bkf"
        f.save(out[cls.__name__])
    return out


def rbloom_peer(folder: Path) -> list[str] | None:
    """The command that loads a saved rbloom filter and asks one key, or None without rbloom."""
    try:
        import rbloom
    except ImportError:
        return None
    import hashlib

    def h(obj: Any) -> int:
        return int.from_bytes(hashlib.blake2b(repr(obj).encode(), digest_size=16).digest(), "little", signed=True)

    f = rbloom.Bloom(1_000_000, 0.01, h)
    f.update(f"key-{i}" for i in range(100_000))
    f.save(str(folder / "rbloom.bin"))
    script = folder / "rbloom_query.py"
    script.write_text(
        "import hashlib, sys, rbloom\n"
        "def h(obj):\n"
        "    return int.from_bytes(hashlib.blake2b(repr(obj).encode(), digest_size=16).digest(), 'little', signed=True)\n"
        f"f = rbloom.Bloom.load({str(folder / 'rbloom.bin')!r}, h)\n"
        "print('key-7', 'maybe' if 'key-7' in f else 'no')\n")
    return [PY, str(script)]


def warm(files: dict[str, Path]) -> list[dict[str, Any]]:
    """In one process: load + one ``in`` (after a warm-up); in new processes: the first vs the
    second batch query."""
    import bloomkit

    rows = []
    for name, path in files.items():
        t = measure(lambda p=path: "key-7" in bloomkit.load(p), warmup=2, repeats=9)
        rows.append({"operation": f"load + one `in`: {name}", "median s": t["median"], "min s": t["min"]})
    # the first batch query of a new process pays numba's start-up (import + cached kernels)
    code = ("import sys, time, numpy as np, bloomkit\nf = bloomkit.load(sys.argv[1])\n"
            "keys = np.array([f'key-{i}' for i in range(1000)])\nout = []\nfor _ in range(2):\n"
            "    t = time.perf_counter(); f.contains_many(keys); out.append(time.perf_counter() - t)\nprint(*out)")
    runs = [[float(x) for x in subprocess.run([PY, "-c", code, str(files["BloomFilter"])], capture_output=True,
                                              text=True, check=True).stdout.split()] for _ in range(5)]
    for i, label in enumerate(("first contains_many of a process (numba start-up)", "second contains_many")):
        vals = [r[i] for r in runs]
        rows.append({"operation": label, "median s": statistics.median(vals), "min s": min(vals)})
    return rows


def streaming(folder: Path, lines: int) -> list[dict[str, Any]]:
    """bloomkit build of ``lines`` distinct keys from a file and from a pipe, and of an endless
    stream of one key cut after ``lines`` and ``4 * lines`` lines (RSS must not follow)."""
    text = folder / "keys.txt"
    with open(text, "w") as fh:
        for lo in range(0, lines, 100_000):
            fh.write("".join(f"key-{i}\n" for i in range(lo, min(lines, lo + 100_000))))
    rows = []
    out = str(folder / "out.bkf")
    wall, peak, code = run_once([BLOOMKIT, "build", str(text), "-o", out])
    rows.append({"input": f"{lines:,} distinct keys, a file", "wall s": wall, "peak MiB": peak, "exit": code})
    with open(text, "rb") as fh:
        pipe = subprocess.Popen(["cat"], stdin=fh, stdout=subprocess.PIPE)
        wall, peak, code = run_once([BLOOMKIT, "build", "-", "-o", out], stdin=pipe.stdout)
        pipe.wait()
    rows.append({"input": f"{lines:,} distinct keys, a pipe (spooled)", "wall s": wall, "peak MiB": peak, "exit": code})
    for n in (lines, 4 * lines):
        gen = subprocess.Popen(["sh", "-c", f"yes same-key | head -n {n}"], stdout=subprocess.PIPE)
        wall, peak, code = run_once([BLOOMKIT, "build", "-", "-o", out], stdin=gen.stdout)
        gen.wait()
        rows.append({"input": f"{n:,} lines of one key, a pipe", "wall s": wall, "peak MiB": peak, "exit": code})
    zeros = subprocess.Popen(["cat", "/dev/zero"], stdout=subprocess.PIPE)
    wall, peak, code = run_once([BLOOMKIT, "build", "-", "-o", out], stdin=zeros.stdout)
    zeros.kill()
    zeros.wait()
    rows.append({"input": "endless zeros (cat /dev/zero), a pipe", "wall s": wall, "peak MiB": peak, "exit": code})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--out", default="benchmarks/results")
    args = ap.parse_args()
    repeats = args.repeats or (3 if args.quick else 9)
    lines = 200_000 if args.quick else 2_000_000
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        folder = Path(tmp)
        # what a user's second run costs: bytecode written by the warm-up run and read after it
        # (PYTHONDONTWRITEBYTECODE, set on some machines, would make every run compile every
        # module: +0.15 s a query measured here), kept in the temporary folder, not the tree
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
        files = make_files(folder)
        commands = {
            "python -c pass": [PY, "-c", "pass"],
            "python -c 'import numpy'": [PY, "-c", "import numpy"],
            "python -c 'import bloomkit'": [PY, "-c", "import bloomkit"],
            "python -c 'import numba'": [PY, "-c", "import numba"],
            **{f"bloomkit query ({name})": [BLOOMKIT, "query", str(path), "key-7"] for name, path in files.items()},
            "bloomkit info --timing (BloomFilter)": [BLOOMKIT, "info", str(files["BloomFilter"]), "--timing"],
        }
        peer = rbloom_peer(folder)
        if peer is not None:
            commands["peer: load a saved rbloom filter + one key"] = peer
        cold_rows = cold(commands, repeats)
        warm_rows = warm(files)
        stream_rows = streaming(folder, lines)
    load = os.getloadavg()
    meta = {"repeats": repeats, "lines": lines, "loadavg": load, "rbloom": "measured" if peer else "missing",
            "versions": versions(["numpy", "numba", "pyarrow", "rbloom"])}
    for title, rows in (("cold: whole processes", cold_rows), ("warm: in one process", warm_rows),
                        ("streaming builds", stream_rows)):
        print(f"## {title}\n\n{markdown_table(rows)}")
    print(f"load average while measured: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
          + ("" if peer else "; rbloom missing (pip install -e '.[bench]'): no peer row"))
    write_results("bench_cli", [*({"table": "cold", **r} for r in cold_rows), *({"table": "warm", **r} for r in warm_rows),
                                *({"table": "streaming", **r} for r in stream_rows)], meta, args.out)


if __name__ == "__main__":
    main()
