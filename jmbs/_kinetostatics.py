"""The kinetostatic (free-body-diagram) equilibrium matrix `A` of Pękal & Frączek.

Columns are the unknowns (every reaction component and driving force or
torque, in element order), rows the force and moment balance of every body in
jmbs's velocity coordinates: force in the global frame, moment about the
centre of mass (body frame in 3-D). Each column is built from the physical
meaning of the component (`AbstractElement.wrenches`): a unit wrench on body j
and the opposite one on body i. It is built independently of `C`; on the
constraint manifold `A = C^T` (the component value is `-lambda`, the force on
body j), which the tests check.
"""

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ._assembly import group_blocks, group_inputs, jitted, scatter_matrix
from ._bodies import position, rotation
from ._custom_types import Scalar
from ._model import Model


def _generalized(qb: Array, P: Array, F: Array, M: Array) -> Array:
    """Generalized force `(m, nv_b)` on one body of the unit wrenches `(F, M)` at `P`."""
    arm = P - position(qb)
    if qb.shape[-1] == 3:
        moment = M[:, 0] + arm[0] * F[:, 1] - arm[1] * F[:, 0]
        return jnp.concatenate([F, moment[:, None]], axis=1)
    moment = M + jnp.cross(arm[None], F)
    return jnp.concatenate([F, moment @ rotation(qb)], axis=1)  # rows R^T m


def _wrench_blocks(qs: Array, P: Array, F: Array, M: Array) -> Array:
    """Per-instance blocks `(n, m, 2, nv_b)`: minus the wrench on body i, plus on body j."""
    def one(q, p, f, m):
        return jnp.stack([-_generalized(q[0], p, f, m), _generalized(q[1], p, f, m)], axis=1)

    return jax.vmap(one)(qs, P, F, M)


@jitted
def kinetostatic_matrix(model: Model, q: Float[Array, " nq"], t: Scalar = 0.0) -> Float[Array, "nv nc"]:
    """The equilibrium matrix `A` (`nv x nc`) of the free-body diagrams.

    `A x` is the generalized force that the reaction components and driving
    forces `x` exert on the bodies, so the equations of motion read
    `M v_dot = F + A x` (statics: `A x = -F`). Columns follow the element
    rows of `C`; user-defined constraints, which have no physical reaction
    basis, contribute their rows of `C` (transposed).

    **Arguments:**
    - `model`: the model.
    - `q`: configuration `(nq,)`.
    - `t`: time.

    **Returns:** `A`, `(nv, nc)`.
    """
    t = jnp.asarray(t, dtype=float)
    blocks = []
    for g in model.groups:
        qs, _ = group_inputs(model, g, q, None)
        w = g.wrenches(qs, t)
        blocks.append(group_blocks(g, qs, t) if w is None else _wrench_blocks(qs, *w))
    return scatter_matrix(model, blocks).T
