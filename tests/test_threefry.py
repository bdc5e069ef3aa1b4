"""slrlib.threefry: the unrolled CPU lowering of Threefry gives JAX's own bits, faster."""

from __future__ import annotations

import json
import subprocess
import sys

import jax
import jax.extend.random as jex_random
import jax.numpy as jnp
import numpy as np


from slrlib.threefry import unrolled_threefry_active, use_unrolled_threefry

# Draws compared with a process that never imports slrlib (JAX's rolled CPU lowering):
# raw bits, uniforms, float32 and float64 normals, split and fold_in keys, under jit and vmap.
_DRAWS = r"""
import json, sys
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
def draws():
    key = jax.random.key(20251124)
    k1, k2 = jax.random.split(key)
    out = {
        "bits": jax.random.bits(k1, (3, 1001), jnp.uint32),
        "uniform": jax.random.uniform(k2, (777,), jnp.float64),
        "normal32": jax.random.normal(jax.random.fold_in(key, 7), (128, 801), jnp.float32),
        "normal64": jax.random.normal(jax.random.fold_in(key, 8), (513,), jnp.float64),
        "vmapped": jax.jit(jax.vmap(lambda k: jax.random.normal(k, (5, 80), jnp.float32)))(
            jax.random.split(key, 4)),
        "keydata": jax.random.key_data(jax.random.split(k2, 9)),
    }
    return {name: [str(a.dtype), jax.numpy.asarray(a).view(
        jnp.uint64 if a.dtype.itemsize == 8 else jnp.uint32).ravel().tolist()] for name, a in out.items()}
"""


def _draws_here():
    namespace: dict = {}
    exec(_DRAWS, namespace)
    return namespace["draws"]()


def test_active_on_the_pinned_jax():
    # The speed-up must not be lost silently when JAX is upgraded.
    assert unrolled_threefry_active()
    assert use_unrolled_threefry() is None and unrolled_threefry_active()  # idempotent


def test_same_bits_as_jax_own_lowering():
    """Integer arithmetic is exact: every draw equals, bit for bit, the draw of a process that
    uses JAX's stock (rolled) CPU lowering."""
    script = _DRAWS + "\nprint(json.dumps(draws()))\n"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    stock = json.loads(proc.stdout)
    here = _draws_here()
    assert set(stock) == set(here)
    for name in stock:
        assert stock[name][0] == here[name][0], name
        assert stock[name][1] == here[name][1], name


def test_known_answers():
    """Threefry-2x32, 20 rounds: the known-answer vectors of Salmon et al. (Random123, kat_vectors)."""
    kat = [
        ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
        ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
        ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
    ]
    for key, counter, expected in kat:
        out = jax.jit(jex_random.threefry_2x32)(np.array(key, np.uint32), np.array(counter, np.uint32))
        assert [int(w) for w in np.asarray(out)] == list(expected)


def test_compiled_without_a_loop():
    """The compiled hash has no while loop (the rolled lowering has one)."""
    text = jax.jit(lambda k: jax.random.bits(k, (64,), jnp.uint32)).lower(jax.random.key(0)).compile().as_text()
    assert "while" not in text
