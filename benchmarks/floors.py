"""What a step must cost at least: random normals drawn and multiply-adds, times their measured price.

For each timed figure, ``make bench`` states a floor per run-step:

    floor = normals x (ns per normal) + multiply-adds x (ns per multiply-add),

with both prices measured on this machine, in this run, by the kernels below, at the
shapes and dtypes of the figure's step. The counts are exact for the step as implemented
(the formulas are in the functions' docstrings). The ratio measured / floor says how much
of a step is neither drawing nor multiplying: layer normalisation, softmax, erf, the
optimiser update, loop and fusion overheads.
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp

__all__ = ["transformer_counts", "sgd_counts", "ns_per_normal", "ns_per_mac"]


def transformer_counts(config) -> dict:
    r"""Normals and multiply-adds of one run-step of :func:`slrlib.training.transformer.train_transformer`.

    With batch B, L tokens of dimension d, H heads of width r, MLP width m, one step draws
    :math:`B(Ld + 1)` normals (tokens and output noise; the positions are :math:`B` or :math:`BL`
    uniform words more, counted with them). The register path (:func:`slrlib.training.transformer.predict`)
    multiplies: scores :math:`BLdH`, pooling :math:`BHLd`, values :math:`BHdr`, output projection
    :math:`BHrd` (for one head too: the fixed :math:`W_O = I_d` is multiplied like any matrix), MLP
    :math:`2Bdm`. The backward pass costs one product per trainable matrix for its gradient and one
    per input that needs a gradient: scores and pooling once more each (the tokens need none),
    values twice, output projection twice (once for the frozen :math:`W_O` of one head), MLP twice.
    """
    B, L, d, H, r, m = config.batch_size, config.L, config.d, config.n_heads, config.r, config.m
    M = config.M
    wo = B * H * r * d
    forward = B * L * d * H + B * H * L * d + B * H * d * r + wo + 2 * B * d * m
    backward = B * L * d * H + B * H * L * d + 2 * B * H * d * r + (2 * wo if H > 1 else wo) + 4 * B * d * m
    positions = B * L if M > 1 else B
    return {"normals": B * (L * d + 1) + positions, "macs": forward + backward}


def sgd_counts(config, n_draws: int) -> dict:
    r"""Normals and multiply-adds of one run-step of the exact sampler (:mod:`slrlib.training.sgd`), float64.

    ``n_draws`` normals (:func:`slrlib.training.sgd.exact_sampler_draws`). With D basis directions, 2H
    parameter vectors and BL tokens: the basis by Gram–Schmidt, twice (about :math:`2 D^2 d`),
    the projections :math:`2 BLDH`, the in-span gradient :math:`2H\,BLD + 2H\,Dd`, the Gram matrix
    :math:`BL(2H)^2`, the orthogonal part :math:`(2H)^2 d + 2\cdot 2H\,Dd`, and the sphere step :math:`2\cdot 2Hd`.
    """
    B, L, d, H, M = config.batch_size, config.L, config.d, config.heads, config.M
    D = 2 * H + 2 * M
    P = 2 * H
    macs = 2 * D * D * d + 2 * B * L * D * H + P * B * L * D + P * D * d + B * L * P * P + P * P * d + 2 * P * D * d + 2 * P * d
    return {"normals": n_draws, "macs": macs}


def _median_time(fn, repeats=5) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def ns_per_normal(runs: int, shape: tuple[int, ...], dtype=jnp.float32, steps: int = 200) -> float:
    """Price of one normal drawn as the training loops draw them: a fresh key per step
    (``fold_in``), ``shape`` normals per run, ``runs`` runs vmapped, ``steps`` steps."""
    size = int(jnp.prod(jnp.array(shape)))

    @jax.jit
    def draw(key):
        def run(k):
            def body(t, acc):
                return acc + jnp.sum(jax.random.normal(jax.random.fold_in(k, t), shape, dtype))
            return jax.lax.fori_loop(0, steps, body, jnp.zeros((), dtype))
        return jax.vmap(run)(jax.random.split(key, runs))

    key = jax.random.key(0)
    seconds = _median_time(lambda: jax.block_until_ready(draw(key)))
    return seconds / (runs * steps * size) * 1e9


def ns_per_mac(runs: int, rows: int, inner: int, cols: int, dtype=jnp.float32, steps: int = 200) -> float:
    """Price of one multiply-add in a batched product (runs, rows, inner) x (runs, inner, cols),
    repeated ``steps`` times in a loop (each product depends on the previous one)."""
    key = jax.random.key(1)
    A = jax.random.normal(key, (runs, rows, inner), dtype)
    W = jax.random.normal(jax.random.fold_in(key, 1), (runs, inner, cols), dtype) / jnp.sqrt(inner).astype(dtype)

    @jax.jit
    def chain(A, W):
        def body(_, acc):
            return jnp.einsum("rbi,ric->rbc", A + acc[..., :1], W)
        return jax.lax.fori_loop(0, steps, body, jnp.zeros((runs, rows, cols), dtype))

    seconds = _median_time(lambda: jax.block_until_ready(chain(A, W)))
    return seconds / (runs * steps * rows * inner * cols) * 1e9
