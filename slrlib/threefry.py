r"""Threefry on the CPU with its rounds unrolled: the same random bits, about 4.5 times faster.

JAX's default generator is Threefry-2x32 (20 rounds of add, rotate, xor on pairs of 32-bit
words). On CPU, JAX lowers it as a ``while`` loop over its five groups of four rounds
(``use_rolled_loops=True`` in ``jax/_src/random/threefry2x32.py``), to keep XLA's compile
times short. Each trip through that loop reads and writes the whole state, so the hash runs
at memory speed instead of being fused into one vectorised kernel with its consumer. On the
Transformer training of chapters 10–11, where a step draws :math:`128 \times 10 \times 80`
normals, that loop was the largest single cost.

:func:`use_unrolled_threefry` registers, for the CPU only, the lowering that JAX itself uses
on every other platform (``use_rolled_loops=False``): the same twenty rounds written out. The
arithmetic is exact integer arithmetic on ``uint32``, so the bits, and hence every key, normal
and uniform, are identical to the stock lowering on every machine (tested in
``tests/test_threefry.py`` against a fresh process without the change, and against the
published Threefry-2x32 known-answer vectors). Only the speed changes: on a 2-core AMD EPYC,
1.45 ns per 32-bit word instead of 6.9 (``make bench`` prints the measurement).

It is an opt-in: ``import slrlib`` changes nothing in JAX. The book's chapters, the figure command
(``python -m slrlib figure``), the tests and the benchmarks call it once; a researcher may too,
at the cost of changing, for the whole process, how JAX builds its CPU programs (never their
results). It touches a private JAX module; if a JAX version moves it, nothing is registered and
JAX's own lowering stays (same numbers, slower), and :func:`unrolled_threefry_active` says which
one is in force.
"""

from __future__ import annotations

__all__ = ["use_unrolled_threefry", "unrolled_threefry_active"]

_ACTIVE = False


def use_unrolled_threefry() -> None:
    """Lower ``threefry2x32`` on CPU with unrolled rounds.

    Idempotent. It changes how programs compiled afterwards are built, not their results. It
    returns nothing (a notebook cell that ends with it shows no output);
    :func:`unrolled_threefry_active` says whether the unrolled lowering is in force (not when
    the JAX internals it needs are missing).
    """
    global _ACTIVE
    if _ACTIVE:
        return
    try:
        from jax._src.interpreters import mlir
        from jax._src.random import threefry2x32 as _tf

        rule = (
            _tf._threefry2x32_lowering_rule
        )  # JAX's unrolled lowering (its non-CPU default)
        mlir.register_lowering(_tf.threefry2x32_p, rule, platform="cpu")
    except (
        ImportError,
        AttributeError,
    ):  # a JAX without these internals: keep its own lowering
        return
    _ACTIVE = True


def unrolled_threefry_active() -> bool:
    """Whether :func:`use_unrolled_threefry` has replaced JAX's rolled CPU lowering.

    Returns
    -------
    bool
        True once :func:`use_unrolled_threefry` has registered the unrolled lowering.
    """
    return _ACTIVE
