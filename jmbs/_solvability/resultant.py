"""Group resultants: the wrench a set of elements applies to a body or a set of bodies.

The resultant of the reactions of elements `G` on the bodies `B` (about a point `P`) is
what a rigid motion of `B` as a whole does work against: with `V` the generalized
velocities of the bodies of `B` moving rigidly with a unit twist about `P` (one column
per twist component, zero for the other bodies), it is `V^T C_G^T lambda_G` up to sign.
All equilibria are `lambda_p + N alpha` (`N` a basis of `null(C^T)`), so the resultant is
unique iff `V^T C_G^T N_G = 0`. It can be unique while every element's reaction is not
(the ground joints of an overconstrained platform together carry the load, however the
redundancy splits it between them); for one element on its own body it is the
element's own test. Elements between two bodies of `B` are internal to it (their
wrenches cancel); the resultant on a set that holds the ground is minus the one on the
other bodies.

Decided on the equilibrated matrix (`equilibrate.scaled`): `C_s = D_r C D_c`, so
`V_s = D_c^{-1} V`, whose columns are normalised (each twist component has its own unit);
the criterion `||V_s^T C_s,G^T N_s,G||_F` against the method's `ctol` is then free of
units, like the elements' criteria.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from .._assembly import constraint_matrix
from .._bodies import NQ
from .._linalg import decades
from .._model import GROUND, Body, Model
from .._rank import characteristic_lengths, scaled
from .._rotations import quat_to_rot


def resultant_set(model: Model, group, on) -> tuple[np.ndarray, dict[int, int], np.ndarray]:
    """Host-side check of a resultant's group and bodies: `(rows, sides, bodies)`, the
    group's rows of `C` (a mask `(nc,)`), `{element index: +1 | -1 | 0}` (the resultant
    takes the element's wrench on its body j, its opposite, or nothing when both its
    bodies are in `on`), and the moving bodies whose rigid motion measures the resultant
    (a mask `(nb,)`: `on` itself, or every other body when `on` holds the ground), with a
    `ValueError` naming what is wrong."""
    names = [group] if isinstance(group, str) else list(group)
    if not names:
        raise ValueError("a resultant needs at least one element; got an empty group")
    targets = [on] if isinstance(on, str | Body) else list(on)
    if not targets:
        raise ValueError("a resultant acts on at least one body; got on=[]")
    on_names = set()
    for body in targets:
        name = body.name if isinstance(body, Body) else body
        if name != GROUND:
            model.body_index(name)  # raises for an unknown body, listing the known ones
        on_names.add(name)
    rows, sides = [], {}
    for name in names:
        info = model.element(name)  # raises for an unknown element
        if info.kind in ("holonomic", "pfaffian"):
            raise ValueError(f"element {name!r} is a user constraint: it has no physical wrench, so "
                             "it cannot enter a resultant; leave it out of the group")
        if not on_names & set(info.bodies):
            raise ValueError(f"element {name!r} connects {' and '.join(info.bodies)}, none of which "
                             f"is in on={sorted(on_names)}: it applies nothing to them")
        a, b = info.rows
        rows += range(a, b)
        body_i, body_j = info.bodies
        sides[model.element_names.index(name)] = (body_j in on_names) - (body_i in on_names)
    bodies = np.isin(model.body_names, sorted(on_names))
    row_mask = np.zeros(model.nc, bool)
    row_mask[rows] = True
    return row_mask, sides, ~bodies if GROUND in on_names else bodies


def rigid_twists(q: Array, bodies: Array, dim: int) -> Array:
    """`V (nv, nw)`: the generalized velocities of the bodies in the mask `bodies (nb,)`
    (coordinates `q`) moving as one rigid body with a unit twist about the origin
    (translations along x, y (, z), then rotations about the axes), zero for the other
    bodies; `nw` 3 planar, 6 spatial."""
    qb = q.reshape(-1, NQ[dim])
    nb = qb.shape[0]
    if dim == 2:
        one, zero = jnp.ones(nb), jnp.zeros(nb)
        blocks = jnp.stack([jnp.stack([one, zero, -qb[:, 1]], -1), jnp.stack([zero, one, qb[:, 0]], -1),
                            jnp.stack([zero, zero, one], -1)], axis=1)  # (nb, 3, 3)
    else:
        axes = jnp.eye(3)

        def block(x):
            top = jnp.concatenate([axes, jnp.cross(axes, x[:3]).T], axis=1)  # r_dot = w x r
            bottom = jnp.concatenate([jnp.zeros((3, 3)), quat_to_rot(x[3:7]).T], axis=1)  # w' = R^T w
            return jnp.concatenate([top, bottom], axis=0)

        blocks = jax.vmap(block)(qb)  # (nb, 6, 6)
    return (blocks * jnp.asarray(bodies, dtype=q.dtype)[:, None, None]).reshape(nb * blocks.shape[1], -1)


def resultant_criterion(C: Array, q: Array, L: Array, dim: int, rows: Array, bodies: Array,
                        rigid: tuple[bool, ...], rank: Array) -> Array:
    """The criterion `||V_s^T C_s,G^T N_s,G||_F` of a resultant (module docstring), from
    the constraint matrix `C` at `q` and the bodies' characteristic lengths `L`: `rows
    (nc,)` the group's rows and `bodies (nb,)` the bodies moved rigidly (masks, traced: one
    program serves every group of a model), `N_s` the last `nr - rank` left singular
    vectors of the equilibrated rigid rows (`rank` their rank, as decided for the
    reactions). Rows not `rigid` (compliant) have unique reactions and leave the test.
    Traceable; a decision, so without derivative."""
    C, q, L = jax.lax.stop_gradient((C, q, L))
    kept = np.flatnonzero(np.asarray(rigid, bool))
    Cs, _, col = scaled(C, L, dim)
    Cs, group = Cs[kept], jnp.asarray(rows, dtype=q.dtype)[kept][:, None]
    Vs = rigid_twists(q, bodies, dim) / col[:, None]
    Vs = Vs / jnp.maximum(jnp.linalg.norm(Vs, axis=0), jnp.finfo(float).tiny)[None, :]
    U = jnp.linalg.svd(Cs, full_matrices=True)[0]
    N = U * (jnp.arange(U.shape[1]) >= rank)[None, :]
    return jnp.linalg.norm(((group * Cs) @ Vs).T @ (group * N))


@functools.partial(jax.jit, static_argnums=(3, 6))
def resultant_criteria(Cs: Array, qs: Array, L: Array, dim: int, rows: Array, bodies: Array,
                       rigid: tuple[bool, ...], ranks: Array) -> Array:
    """`resultant_criterion` for a batch `Cs (B, nc, nv)`, `qs (B, nq)`, `ranks (B,)` (a
    small program of the matrices' sizes: `C` comes from its own compiled program)."""
    return jax.vmap(lambda C, q, r: resultant_criterion(C, q, L, dim, rows, bodies, rigid, r))(Cs, qs, ranks)


def resultant_decision(model: Model, q, t, group, on, rank: int, ctol: float) -> tuple[bool, float, float]:
    """Host-side: `(unique, criterion, margin)` of the resultant of `group` on `on` at `q`."""
    rows, _, bodies = resultant_set(model, group, on)
    q = jnp.asarray(q, dtype=float)
    C = constraint_matrix(model, q, jnp.asarray(t, dtype=float))
    crit = float(resultant_criteria(C[None], q[None], characteristic_lengths(model), model.dim,
                                    jnp.asarray(rows), jnp.asarray(bodies), (True,) * model.nc,
                                    jnp.asarray([rank]))[0])
    return crit <= ctol, crit, float(decades(jnp.asarray(crit), ctol))
