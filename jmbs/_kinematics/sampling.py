"""Random configurations on the constraint manifold near the reference."""

from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from .._bodies import NV, retract
from .._misc import check_finite, check_int, check_positive
from .._model import Model
from .assemble import assemble_positions, free_mask


def sample_configurations(model: Model, n: int, *, key: Array | int = 0, scale: float = 0.3,
                          t=0.0, fixed: Sequence = (), tol: float = 1e-12,
                          max_steps: int = 50) -> tuple[Array, Array]:
    """Random configurations on the constraint manifold near the reference.

    Each sample perturbs `model.q0` by a normal random velocity-coordinate
    step (`scale` times the body's characteristic length in translation,
    `scale` radians in rotation), then `assemble`s it (vmapped). For driven
    mechanisms pass random times `t` (shape `(n,)`) to move the drivers.

    **Arguments:**
    - `n`: number of samples; `key`: a `jax.random` key or an integer seed.
    - `scale`: size of the perturbation.
    - `t`: time, scalar or `(n,)`.
    - `fixed`, `tol`, `max_steps`: as in `assemble`.

    **Returns:** `(qs (n, nq), converged (n,))`; use `qs[converged]`.
    """
    where = "jmbs.sample_configurations"
    check_int(where, "n", n, "give the number of samples")
    check_positive(where, "scale", scale)
    check_positive(where, "tol", tol)
    check_int(where, "max_steps", max_steps, "it bounds the Gauss-Newton iterations")
    check_finite(where, "t", t, "pass finite times")
    if np.ndim(t) not in (0, 1) or (np.ndim(t) == 1 and np.shape(t)[0] != n):
        raise ValueError(f"{where}: t must be one time or n = {n} times, got shape {np.shape(t)}")
    key = jax.random.key(key) if isinstance(key, int) else key
    free = tuple(bool(f) for f in free_mask(model, fixed))
    ts = jnp.broadcast_to(jnp.asarray(t, dtype=float), (n,))
    return _sample(model, key, n, scale, ts, free, tol, max_steps)


def velocity_units(model: Model) -> Array:
    """Per velocity coordinate, its unit of size `(nv,)`: the body's characteristic
    length for a translation, one radian for a rotation."""
    nvb = NV[model.dim]
    L = model.characteristic_lengths()
    return jnp.concatenate([jnp.broadcast_to(L[:, None], (model.n_bodies, model.dim)),
                            jnp.ones((model.n_bodies, nvb - model.dim))], axis=1).ravel()


@eqx.filter_jit
def _sample(model, key, n, scale, ts, free, tol, max_steps):
    unit = velocity_units(model)
    dvs = scale * unit[None, :] * jax.random.normal(key, (n, model.nv))
    guesses = jax.vmap(lambda dv: retract(model, model.q0, dv * jnp.asarray(free)))(dvs)
    res = jax.vmap(lambda q, t: assemble_positions(model, q, t, free, tol, max_steps))(guesses, ts)
    return res.q, res.converged
