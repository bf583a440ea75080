"""Per-body coordinate conventions (planar `(x, y, phi)`, spatial `(r, p)`).

Functions here take the coordinates of one body (or a stack of bodies on the
leading axes) and infer planar/spatial from the trailing size: 3 numbers for a
planar body, 7 for a spatial one.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._rotations import PERP2, quat_exp, quat_multiply, quat_rate_matrix, quat_to_rot, rot2, rot_to_quat

NQ = {2: 3, 3: 7}
NV = {2: 3, 3: 6}
# NumPy, not jnp: `import jmbs` must not start JAX's backend (jax.distributed.initialize
# has to come first in a multi-process program).
GROUND_Q = {2: np.zeros(3), 3: np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])}


def _planar(q: Array) -> bool:
    return q.shape[-1] == 3


def position(q: Float[Array, " nq_b"]) -> Array:
    """Position of the body frame (the centre of mass)."""
    return q[:2] if _planar(q) else q[:3]


def rotation(q: Float[Array, " nq_b"]) -> Array:
    """Rotation matrix of the body frame (body -> global)."""
    return rot2(q[2]) if _planar(q) else quat_to_rot(q[3:])


def matvec(A: Array, x: Array) -> Array:
    """`A @ x` for a small matrix, written elementwise.

    Under `vmap`, `@` on tiny matrices becomes a batched `dot` that XLA's CPU
    backend runs slowly; broadcast-and-sum fuses with its neighbours. A matrix `x`
    (a joint's frame rotated, `(3, 3)`) is summed term by term instead: XLA's CPU
    backend hands a sum over the middle axis to a library reduction that took a
    quarter of the Bricard's batched step (`jmbs.step`, 64 instances: two such
    products, 79 us each per call).
    """
    if x.ndim == 1:
        return jnp.sum(A * x[None, :], axis=1)
    return sum_terms(A[:, :, None] * x[None, :, :], 1)


def sum_terms(x: Array, axis: int) -> Array:
    """`jnp.sum(x, axis)`, term by term where the axis is short (see `matvec`): long axes
    (a hub's many joints) keep the sum."""
    n = x.shape[axis]
    if n > 16:
        return jnp.sum(x, axis=axis)
    terms = [jax.lax.index_in_dim(x, i, axis, keepdims=False) for i in range(n)]
    out = terms[0] if terms else jnp.zeros(x.shape[:axis] + x.shape[axis + 1:])
    for term in terms[1:]:
        out = out + term
    return out


def dot(a: Array, b: Array) -> Array:
    """Dot product over the last axis, elementwise (see `matvec`)."""
    return jnp.sum(a * b, axis=-1)


def rotate(q: Float[Array, " nq_b"], x: Array) -> Array:
    """Body-frame vector(s) `x` (`(d,)` or `(d, k)`) expressed in the global frame.

    In 3-D it is `R(p) x` with `R = quat_to_rot(p)`. A caller that rotates several
    vectors of one body builds `rotation(q)` once and applies it with `matvec`: the
    constraint terms differentiate these expressions twice, and one rotation
    matrix per body keeps their programs small (docs/benchmarks.md, "Smaller
    constraint-term programs").
    """
    if _planar(q):
        return jnp.cos(q[2]) * x + jnp.sin(q[2]) * (PERP2 @ x)
    return matvec(quat_to_rot(q[3:7]), x)


def point(q: Float[Array, " nq_b"], s: Array) -> Array:
    """Global position of the body point with local coordinates `s`."""
    return position(q) + rotate(q, s)


def body_qdot(qs: Array, vs: Array) -> Array:
    """`q_dot = N(q) v` for bodies stacked on the leading axes."""
    if _planar(qs):
        return vs

    def one(q, v):
        return jnp.concatenate([v[:3], matvec(quat_rate_matrix(q[3:]), v[3:])])

    flat = jax.vmap(one)(qs.reshape(-1, 7), vs.reshape(-1, 6))
    return flat.reshape(qs.shape)


def body_N(q: Float[Array, " nq_b"]) -> Array:
    """The matrix `N` of one body: `q_dot = N v`."""
    if _planar(q):
        return jnp.eye(3)
    return jnp.block([[jnp.eye(3), jnp.zeros((3, 3))], [jnp.zeros((4, 3)), quat_rate_matrix(q[3:])]])


def reference_q(position: Array, orientation: Array, kind: str) -> Array:
    """Coordinates of one body from its builder values: `position` and the
    orientation given as `kind` (`"angle"`, `"rotation"` (3x3) or
    `"quaternion"`, normalised here)."""
    position = jnp.asarray(position, dtype=float)
    o = jnp.asarray(orientation, dtype=float)
    if kind == "angle":
        return jnp.concatenate([position, o[None]])
    p = rot_to_quat(o) if kind == "rotation" else o / jnp.linalg.norm(o)
    return jnp.concatenate([position, p])


def retract(model, q: Array, dv: Array) -> Array:
    """Move `q` by the velocity-space increment `dv`, keeping quaternions unit.

    Planar: `q + dv`. Spatial: `r + dr`, `p ⊗ exp(dtheta')` (body-frame rotation vector).
    """
    if model.dim == 2:
        return q + dv
    qb, db = q.reshape(-1, 7), dv.reshape(-1, 6)

    def one(qi, di):
        p = quat_multiply(qi[3:], quat_exp(di[3:]))
        return jnp.concatenate([qi[:3] + di[:3], p / jnp.linalg.norm(p)])

    return jax.vmap(one)(qb, db).ravel()


def velocity_increment(model, q: Array, dq: Array) -> Array:
    """The velocity-space increment of a coordinate increment `dq` at `q`, the
    inverse of `q_dot = N(q) v` on unit quaternions (a change of a quaternion's
    norm, which no rotation makes, is dropped)."""
    if model.dim == 2:
        return dq
    qb, db = q.reshape(-1, 7), dq.reshape(-1, 7)

    def one(qi, di):
        p = qi[3:] / jnp.linalg.norm(qi[3:])
        return jnp.concatenate([di[:3], 4.0 * quat_rate_matrix(p).T @ di[3:]])

    return jax.vmap(one)(qb, db).ravel()


def mechanism_size(model, q: Float[Array, " nq"]) -> Float[Array, ""]:
    """The scale that relative position tolerances are measured against:
    `max(1, max |position of a body|)` (quaternions, already of order one,
    excluded). Traced `q` or a JAX array gives a JAX scalar, a NumPy `q` a NumPy one
    (no device program on the host)."""
    xp = np if isinstance(q, np.ndarray) else jnp
    pos = xp.reshape(q, (-1, NQ[model.dim]))[:, :model.dim]
    return xp.maximum(1.0, xp.max(xp.abs(pos), initial=0.0))
