"""A forger of bloomkit containers that knows only docs/format.md.

Given a valid file, :func:`forgeries` yields hostile variants, each with a *recomputed* CRC so
that the checksum does not save the loader: every parameter (and every leaf of nested
parameters) set to huge, negative, NaN, infinite, wrong-typed or deeply nested values, missing
or extra parameters and duplicate keys, every array with a declared shape the data cannot hold,
filled with all-ones / huge values, with another dtype, missing, duplicated or extra, and the
header's hash id, seed and version changed. :func:`run_forgeries` loads them in a child process
(limited address space, a time limit) and reports every outcome that is not FormatError or a
valid object.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HEADER = struct.Struct("<8sHH32sHHQIQ")

# values a hostile parameter takes (JSON text, so NaN / Infinity / 1e400 / 400 digits can be written)
HOSTILE = [
    "0", "-1", "1", "2", "-9223372036854775808", "9223372036854775807", "18446744073709551615",
    "1099511627776", "1e308", "1e400", "-1e400", "NaN", "Infinity", "1.5", "-0.0", "true", "false", "null",
    '"x"', '""', "[]", "{}", "[1,2,3]", '{"a":1}', "9" * 400, "[" * 1000 + "]" * 1000,
    "[" * 40 + "1" + "]" * 40, '"' + "y" * 70000 + '"',
]


def _pad8(n: int) -> int:
    return (-n) % 8


def parse(raw: bytes) -> tuple[str, int, int, int, dict[str, Any], list[tuple[str, str, list[int], bytes]]]:
    """(tag, version, hash_id, seed, params, [(name, dtype, shape, bytes)]) of a valid file."""
    magic, version, _flags, tag, hash_id, _res, seed, plen, dlen = HEADER.unpack_from(raw)
    start = HEADER.size + plen
    params = json.loads(raw[HEADER.size:start])
    descr = params.pop("__arrays__")
    pos = start + _pad8(start)
    arrays = []
    for name, dtype, shape in descr:
        n = 1
        for s in shape:
            n *= s
        nbytes = n * int(dtype[-1])
        arrays.append((name, dtype, shape, raw[pos:pos + nbytes]))
        pos += nbytes + _pad8(nbytes)
    return tag.rstrip(b"\0").decode(), version, hash_id, seed, params, arrays


def build(tag: str, params_json: str, arrays: list[tuple[str, str, list[int], bytes]], *,
          version: int = 2, hash_id: int = 1, seed: int = 0, descr_json: str | None = None) -> bytes:
    """A container with ``params_json`` spliced in as text and a correct CRC."""
    descr = descr_json if descr_json is not None else json.dumps([[n, d, s] for n, d, s, _ in arrays])
    body = params_json.strip()
    assert body.startswith("{") and body.endswith("}")
    inner = body[1:-1].strip()
    pjson = ("{" + inner + ("," if inner else "") + '"__arrays__":' + descr + "}").encode()
    data = b"".join(raw + b"\0" * _pad8(len(raw)) for _, _, _, raw in arrays)
    head = HEADER.pack(b"BLOOMKIT", version, 0, tag.encode(), hash_id, 0, seed, len(pjson), len(data))
    out = head + pjson + b"\0" * _pad8(len(head) + len(pjson)) + data
    return out + struct.pack("<I", zlib.crc32(out))


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:6]):
            yield from _leaves(v, (*path, i))


def _dump_with(params: dict[str, Any], path: tuple[Any, ...], text: str | None) -> str:
    """params as JSON with the value at ``path`` replaced by raw JSON ``text`` (None: deleted)."""
    marker = "\u0000FORGED\u0000"
    doc = json.loads(json.dumps(params))
    node = doc
    for p in path[:-1]:
        node = node[p]
    if text is None:
        if isinstance(node, list):
            del node[path[-1]]
        else:
            node.pop(path[-1])
        return json.dumps(doc, sort_keys=True)
    node[path[-1]] = marker
    return json.dumps(doc, sort_keys=True).replace(json.dumps(marker), text)


def forgeries(raw: bytes) -> Iterator[tuple[str, bytes]]:
    """(description, bytes) of hostile variants of a valid file."""
    tag, version, hash_id, seed, params, arrays = parse(raw)
    pj = json.dumps(params, sort_keys=True)

    def make(pjson: str = pj, arr: list[tuple[str, str, list[int], bytes]] = arrays, **kw: Any) -> bytes:
        opts = {"version": 2, "hash_id": hash_id, "seed": seed, **kw}
        return build(tag, pjson, arr, **opts)

    yield "unchanged", make()
    # header fields
    for hid in (0, 2, 3, 4, 65535):
        if hid != hash_id:
            yield f"hash_id={hid}", make(hash_id=hid)
    for sd in (0, 2**64 - 1):
        yield f"seed={sd}", make(seed=sd)
    yield "version=1 (format 1, refused)", make(version=1)
    # parameters: every leaf, every hostile value
    for path, _v in list(_leaves(params))[1:]:
        where = "/".join(map(str, path))
        for text in HOSTILE:
            yield f"param {where} = {text[:20]}", make(_dump_with(params, path, text))
        yield f"param {where} deleted", make(_dump_with(params, path, None))
    yield "extra param", make(pj[:-1] + (', ' if params else '') + '"zzz_extra": 1}')
    if params:
        k0 = sorted(params)[0]
        yield "duplicate param key", make(pj[:-1] + f', {json.dumps(k0)}: {json.dumps(params[k0])}' + "}")
    yield "deep extra param", make(pj[:-1] + (', ' if params else '') + '"deep": ' + "[" * 5000 + "]" * 5000 + "}")
    # arrays
    for i, (name, dtype, shape, data) in enumerate(arrays):
        def with_array(new: tuple[str, str, list[int], bytes] | None, idx: int = i) -> list[Any]:
            out = list(arrays)
            if new is None:
                del out[idx]
            else:
                out[idx] = new
            return out

        item = int(dtype[-1])
        yield f"array {name} deleted", make(arr=with_array(None))
        yield f"array {name} all ones", make(arr=with_array((name, dtype, shape, b"\xff" * len(data))))
        yield f"array {name} zeros", make(arr=with_array((name, dtype, shape, b"\0" * len(data))))
        if data:
            big = b"".join((1 << (8 * item - 2)).to_bytes(item, "little") for _ in range(len(data) // item))
            yield f"array {name} huge values", make(arr=with_array((name, dtype, shape, big)))
            yield f"array {name} one element short", make(arr=with_array(
                (name, dtype, [len(data) // item - 1] if len(shape) == 1 else shape, data[:-item] if len(shape) == 1 else data)))
        yield f"array {name} one element more", make(arr=with_array(
            (name, dtype, [len(data) // item + 1] if len(shape) == 1 else shape, data + b"\0" * item if len(shape) == 1 else data)))
        for other in ("<u8", "<i8", "<f8", "<u4", "|u1", "|b1"):
            if other != dtype and len(data) % int(other[-1]) == 0:
                n_other = len(data) // int(other[-1])
                yield f"array {name} as {other}", make(arr=with_array((name, other, [n_other], data)))
        for huge in ([2**40], [2**62], [0], [1, 2**40], [2**20, 2**20, 2**20]):
            descr = [[n, d, s] for n, d, s, _ in arrays]
            descr[i][2] = huge
            yield f"array {name} declared shape {huge}", make(descr_json=json.dumps(descr))
        descr = [[n, d, s] for n, d, s, _ in arrays] + [[name, dtype, shape]]
        yield f"array {name} twice", make(arr=[*arrays, (name, dtype, shape, data)], descr_json=json.dumps(descr))
    yield "extra array", make(arr=[*arrays, ("zzz_extra", "<u8", [1], b"\0" * 8)])


CONTAINER_LOADER = textwrap.dedent(r'''
    def load(raw):
        return bloomkit.loads(raw)

    def valid(obj):  # a loaded object is valid: its invariants hold and it round-trips
        obj._check()
        bloomkit.loads(obj.to_bytes())._check()
        json.dumps(obj.info(), default=str)
''')
"""What the child does with each case by default: ``load(raw)`` (bloomkit.loads) and
``valid(obj)``. Other decoders (the folding wire format) pass their own pair."""

CHILD = r'''
import json, resource, sys, traceback
resource.setrlimit(resource.RLIMIT_AS, (__MEMLIMIT__, __MEMLIMIT__))
import bloomkit
from bloomkit.errors import FormatError
__LOADER__
files = sys.argv[1:]
for path in files:
    print(json.dumps({"start": path}), flush=True)
    raw = open(path, "rb").read()
    try:
        obj = load(raw)
    except FormatError:
        print(json.dumps({"path": path, "outcome": "FormatError"}), flush=True)
        continue
    except BaseException as e:
        print(json.dumps({"path": path, "outcome": "other", "error": f"{type(e).__name__}: {str(e)[:300]}",
                          "trace": traceback.format_exc()[-1500:]}), flush=True)
        continue
    try:
        valid(obj)
        outcome = "valid"
    except BaseException as e:
        outcome = "invalid object"
        print(json.dumps({"path": path, "outcome": outcome, "error": f"{type(e).__name__}: {str(e)[:300]}",
                          "trace": traceback.format_exc()[-1500:]}), flush=True)
        continue
    print(json.dumps({"path": path, "outcome": outcome}), flush=True)
'''


def run_forgeries(cases: list[tuple[str, bytes]], folder: Path, *, timeout: float = 240.0,
                  memory_limit: int = 6 << 30, loader: str = CONTAINER_LOADER,
                  outcomes: dict[str, str] | None = None) -> list[str]:
    """Load every case in child processes; the problems found, as readable lines (empty: none).

    ``loader`` is Python source defining ``load(raw)`` and ``valid(obj)`` in the child
    (default: :data:`CONTAINER_LOADER`); ``outcomes``, when given, receives the outcome of every
    case by description. A crash (signal) or hang of the child is reported with the case it
    was loading; the remaining cases run in a new child."""
    paths = []
    names = {}
    for i, (desc, data) in enumerate(cases):
        p = folder / f"case{i:05d}.bkf"
        p.write_bytes(data)
        paths.append(str(p))
        names[str(p)] = desc
    problems: list[str] = []
    todo = paths
    script = CHILD.replace("__MEMLIMIT__", str(memory_limit)).replace("__LOADER__", loader)
    env = {**os.environ, "BLOOMKIT_NUM_THREADS": "1"}
    while todo:
        try:
            proc = subprocess.run([sys.executable, *["-O"] * sys.flags.optimize, "-c", script, *todo],
                                  capture_output=True, text=True, timeout=timeout, env=env)
            out, rc, hung, err = proc.stdout, proc.returncode, False, proc.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, hung, err = -1, True, ""
        done: set[str] = set()
        last = None
        for line in out.splitlines():
            rec = json.loads(line)
            if "start" in rec:
                last = rec["start"]
                continue
            done.add(rec["path"])
            if outcomes is not None:
                outcomes[names[rec["path"]]] = rec["outcome"]
            if rec["outcome"] not in ("FormatError", "valid"):
                problems.append(f"{names[rec['path']]}: {rec['outcome']}: {rec.get('error')}\n{rec.get('trace', '')}")
        if rc != 0 and last is not None and last not in done:
            what = "hang (time limit)" if hung else f"crash (exit {rc})"
            problems.append(f"{names[last]}: {what}")
            done.add(last)
        elif rc != 0:
            problems.append(f"child failed before loading anything (exit {rc}): {err[-2000:]}")
            break
        todo = [p for p in todo if p not in done]
    return problems
