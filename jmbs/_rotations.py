"""Rotations in the plane and in space: rotation matrices, unit quaternions, frames."""

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

# Levi-Civita's tensor.
EPS = np.zeros((3, 3, 3))
for _i, _j, _k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
    EPS[_i, _j, _k], EPS[_i, _k, _j] = 1.0, -1.0


def cross(a: Array, b: Array) -> Array:
    """`a x b` over the last axis (leading axes broadcast), from cyclic shifts of the
    components: whole-array operations that XLA fuses with their neighbours. (A product
    of `a b^T` with a constant (9, 3) matrix, as before, became a library call of its own
    under `vmap`: nine of them were 15 % of the Bricard's batched step.) Three shifts:
    `d = a * s(b) - s(a) * b` is `(c_2, c_0, c_1)`, so `c = s(d)`, each component the
    same two products and difference as the textbook formula."""
    a, b = jnp.broadcast_arrays(a, b)
    return _shift(a * _shift(b) - _shift(a) * b)


def _shift(x: Array) -> Array:
    """`(x[1], x[2], x[0])`: the components shifted cyclically over the last axis."""
    return jnp.concatenate([x[..., 1:], x[..., :1]], axis=-1)


def _quaternion_tensors() -> tuple[np.ndarray, np.ndarray]:
    """Constant `(T (9, 16), G (12, 4))` with `vec R(p) = T vec(p p^T)` and
    `vec G(p) = G p` for `p = (w, u)`: `R = (w^2 - u.u) I + 2 u u^T + 2 w [u]x`,
    `G = 1/2 [-u^T; w I + [u]x]`."""
    eps = EPS  # [u]x = -eps @ u
    T = np.zeros((3, 3, 4, 4))  # symmetric in its last two axes
    T[:, :, 0, 0] = np.eye(3)
    for a in range(3):
        T[:, :, a + 1, a + 1] -= np.eye(3)
        for b in range(3):
            T[a, b, a + 1, b + 1] += 1.0
            T[a, b, b + 1, a + 1] += 1.0
    T[:, :, 0, 1:] = T[:, :, 1:, 0] = -eps
    G = np.zeros((4, 3, 4))
    G[0, :, 1:] = -0.5 * np.eye(3)
    G[1:, :, 0] = 0.5 * np.eye(3)
    G[1:, :, 1:] = -0.5 * eps
    return T.reshape(9, 16), G.reshape(12, 4)


_ROT, _RATE = _quaternion_tensors()


# The planar rotation by +90 degrees. Rotations are written as products with it (and
# the identity) rather than componentwise: the constraint terms differentiate them
# twice, and whole-array products keep those programs small (see `quat_to_rot`).
PERP2 = np.array([[0.0, -1.0], [1.0, 0.0]])


def rot2(phi: Float[Array, ""]) -> Float[Array, "2 2"]:
    """Planar rotation matrix of angle `phi` (body -> global)."""
    return jnp.cos(phi) * np.eye(2) + jnp.sin(phi) * PERP2


def perp2(x: Float[Array, "... 2"]) -> Float[Array, "... 2"]:
    """Rotate planar vectors by +90 degrees: (x, y) -> (-y, x)."""
    return x @ PERP2.T


def quat_to_rot(p: Float[Array, "4"]) -> Float[Array, "3 3"]:
    """Rotation matrix of the quaternion `p = (w, x, y, z)` (body -> global).

    The formula is homogeneous of degree two in `p`, so it is the rotation of
    `p / |p|` scaled by `|p|^2`: exact on unit quaternions, smooth around them.
    """
    # One product with a constant matrix instead of nine scalar formulas: the
    # constraint terms differentiate this twice (the Bricard's C, b and Gamma: 949
    # instead of 2590 operations, compiled in 0.25 instead of 0.42 s).
    return (_ROT @ (p[:, None] * p[None, :]).reshape(16)).reshape(3, 3)


def quat_rate_matrix(p: Float[Array, "4"]) -> Float[Array, "4 3"]:
    """`G(p)` with `p_dot = G(p) omega'` for the body-frame angular velocity `omega'`.

    This is `p_dot = 1/2 p ⊗ (0, omega')`.
    """
    return (_RATE @ p).reshape(4, 3)


def quat_multiply(a: Float[Array, "4"], b: Float[Array, "4"]) -> Float[Array, "4"]:
    """Hamilton product `a ⊗ b`."""
    aw, av = a[0], a[1:]
    bw, bv = b[0], b[1:]
    return jnp.concatenate([jnp.array([aw * bw - av @ bv]), aw * bv + bw * av + cross(av, bv)])


def quat_exp(theta: Float[Array, "3"]) -> Float[Array, "4"]:
    """Unit quaternion of the rotation vector `theta` (smooth at zero)."""
    angle2 = theta @ theta
    safe = jnp.where(angle2 > 1e-24, angle2, 1.0)
    angle = jnp.sqrt(safe)
    small = angle2 <= 1e-24
    half_sinc = jnp.where(small, 0.5 - angle2 / 48.0, jnp.sin(0.5 * angle) / angle)
    cos_half = jnp.where(small, 1.0 - angle2 / 8.0, jnp.cos(0.5 * angle))
    return jnp.concatenate([jnp.array([cos_half]), half_sinc * theta])


def rot_to_quat(R: Float[Array, "3 3"]) -> Float[Array, "4"]:
    """Unit quaternion (w >= 0) of a rotation matrix, by the largest-pivot rule."""
    # Four candidate formulas, the rows of the symmetric 4 x 4 matrix `N` (4 p p^T on
    # unit quaternions); row k is well conditioned when its pivot N[k, k] is largest.
    # Built as whole arrays (the model's derivation evaluates it for every body).
    tr = jnp.trace(R)
    diag = jnp.concatenate([(1 + tr)[None], 1 + 2 * jnp.diagonal(R) - tr])
    skew = jnp.stack([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    # N = [[., skew^T], [skew, R + R^T]] with the diagonal `diag`.
    N = jnp.concatenate([skew[None, :], R + R.T], axis=0)  # columns 1-3
    N = jnp.concatenate([jnp.concatenate([jnp.zeros(1), skew])[:, None], N], axis=1)
    N = N.at[jnp.arange(4), jnp.arange(4)].set(diag)
    k = jnp.argmax(jnp.concatenate([tr[None], jnp.diagonal(R)]))
    q = N[k] / (2.0 * jnp.sqrt(jnp.maximum(N[k, k], 1e-300)))
    return q * jnp.where(q[0] < 0, -1.0, 1.0)


def frame_from_axis(a: Float[Array, "3"]) -> Float[Array, "3 3"]:
    """Right-handed orthonormal frame with columns `(x, y, a/|a|)`.

    The frame is the shortest-arc rotation of the global axes that turns `z`
    onto `a`: for `a = z` it is the identity, and it is smooth in `a` (so
    gradients with respect to an axis are well defined) everywhere except at
    `a = -z`, where the rotation by pi about `x` is used.
    """
    a = a / jnp.linalg.norm(a)
    c = a[2]
    k = jnp.array([-a[1], a[0], 0.0])  # z x a
    K = jnp.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    near_antipode = c < -1.0 + 1e-9
    R = jnp.eye(3) + K + K @ K / jnp.where(near_antipode, 1.0, 1.0 + c)
    return jnp.where(near_antipode, jnp.diag(jnp.array([1.0, -1.0, -1.0])), R)


def frame_from_two_axes(a1: Float[Array, "3"], a2: Float[Array, "3"]) -> Float[Array, "3 3"]:
    """Right-handed orthonormal frame `(a1, a2 orthogonalised, a1 x a2)`."""
    x = a1 / jnp.linalg.norm(a1)
    y = a2 - (a2 @ x) * x
    y = y / jnp.linalg.norm(y)
    return jnp.stack([x, y, jnp.cross(x, y)], axis=1)
