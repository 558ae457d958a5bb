"""The numba decorators, mixers and intrinsics every ``_kernels.py`` of bloomkit uses: declared once.

Thread-safety rule (DESIGN convention 11)
-----------------------------------------
* :data:`jit_read`: kernels that only *read* structure storage (or write arrays they allocate
  themselves, or a caller's private scratch array). They release the GIL (``nogil=True``), so
  batch queries run on several threads.
* :data:`jit_mut`: kernels that *write* storage a structure shares between threads (bits,
  counters, cells, hash-table slots). They keep the GIL: two threads adding at once run one after
  the other and no update is lost. The exceptions: a write into a private array merged
  afterwards, and batch adds of the Bloom / split-block filters, which write the storage
  from the thread holding the filter's lock while single-key adds wait for it
  (``bloomkit._engine.parallel.batch_writer``, ``bloomkit._engine.kernels.bits_set_nogil``).
* :data:`jit_inline`: small helpers inlined into their callers (they take the caller's GIL rule).

Every kernel is compiled on first use and cached on disk (``cache=True``), never at import.

Mixers
------
:func:`splitmix64` is the SplitMix64 finalizer (Steele, Lea, Flood 2014) and :data:`GOLDEN` its
increment ``0x9E3779B97F4A7C15``; the probe values of every structure are
``G_i = splitmix64(h1 + (i + 1) * GOLDEN)`` (:func:`bloomkit._engine.kernels.probe`).
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

__all__ = [
    "GOLDEN",
    "U64",
    "band_xor",
    "jit_inline",
    "jit_mut",
    "jit_read",
    "mulhi64",
    "prefetch",
    "splitmix64",
]

U64 = np.uint64
GOLDEN = U64(0x9E3779B97F4A7C15)

jit_read = numba.njit(cache=True, nogil=True)
"""Read-only kernels (and kernels writing only arrays they own): the GIL is released."""

jit_mut = numba.njit(cache=True)
"""Kernels that mutate shared structure storage: the GIL is kept (no lost updates)."""

jit_inline = numba.njit(cache=True, nogil=True, inline="always")
"""Helpers inlined into their callers."""


@jit_inline
def splitmix64(z: np.uint64) -> np.uint64:
    """The SplitMix64 finalizer of ``z`` (a bijection of uint64).

    >>> int(splitmix64(np.uint64(0x9E3779B97F4A7C15))) == 0xE220A8397B1DCDAF
    True

    C twin: ``splitmix64`` of ``_speedups.c`` (section "XXH64, SplitMix64, exact reduction"); kept
    equal by tests/test_speedups.py::test_single_keys_set_the_bits_of_the_python_path.
    """
    z = (z ^ (z >> U64(30))) * U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> U64(27))) * U64(0x94D049BB133111EB)
    return z ^ (z >> U64(31))


# numba's stubs type a call of an @intrinsic with its code generator's signature (typingctx
# first): call sites in compiled code carry `type: ignore[call-arg]`.
@intrinsic
def mulhi64(typingctx, a, b):  # type: ignore[no-untyped-def]
    """High 64 bits of the 128-bit product a*b (one mul instruction)."""
    sig = types.uint64(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i128 = ir.IntType(128)
        prod = builder.mul(builder.zext(args[0], i128), builder.zext(args[1], i128))
        return builder.trunc(builder.lshr(prod, ir.Constant(i128, 64)), ir.IntType(64))

    return sig, codegen


@intrinsic
def prefetch(typingctx, arr, idx):  # type: ignore[no-untyped-def]
    """``llvm.prefetch`` (read, high locality) of ``arr[idx]``: a hint, never a fault."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        aryty, _idxty = signature.args
        ary, ind = args
        arr_struct = context.make_array(aryty)(context, builder, ary)
        ptr = cgutils.get_item_pointer(context, builder, aryty, arr_struct, [ind])
        i32 = ir.IntType(32)
        opaque = getattr(ptr.type, "is_opaque", False)
        if not opaque:
            ptr = builder.bitcast(ptr, ir.IntType(8).as_pointer())
        name = "llvm.prefetch.p0" if opaque else "llvm.prefetch.p0i8"
        fnty = ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def band_xor(typingctx, arr, base, cf):  # type: ignore[no-untyped-def]
    """XOR of the slots ``arr[base .. base + 63]`` whose bit in ``cf`` is set, as a uint64 (the
    rows layout of ribbon retrieval): one ``<64 x iN>`` load (N = the array's bit width, 8 - 64), a select by
    the 64 bits of ``cf`` and ``llvm.vector.reduce.xor``. LLVM lowers it to masked loads (AVX-512:
    4 of 16 lanes at c = 32) or shifts and ANDs (AVX2). The loop numba wrote for the same sum
    indexed ``Z[base + t]`` through a possibly negative index and became 16 gathers: 2.7x the
    time per key (measured, 10^5 keys in cache). The caller keeps ``base + 63`` inside ``arr``."""
    sig = types.uint64(arr, types.int64, types.uint64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        bits = aryty.dtype.bitwidth
        ety = ir.IntType(bits)
        vty = ir.VectorType(ety, 64)
        if getattr(ptr.type, "is_opaque", False):
            v = builder.load(ptr, typ=vty)
        else:
            v = builder.load(builder.bitcast(ptr, vty.as_pointer()))
        v.align = bits // 8
        sel = builder.select(builder.bitcast(args[2], ir.VectorType(ir.IntType(1), 64)), v, ir.Constant(vty, None))
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ety, [vty]),
                                            f"llvm.vector.reduce.xor.v64i{bits}")
        r = builder.call(fn, [sel])
        return builder.zext(r, ir.IntType(64)) if bits < 64 else r

    return sig, codegen
