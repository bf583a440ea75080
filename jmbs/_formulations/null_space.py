"""Null-space projection: `[V^T M; C] v_dot = [V^T F; Gamma]` with `V` a basis of `null(C)`."""

from typing import Literal

import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
from jaxtyping import Array

from .._model import Model
from .base import AbstractFormulation, DynamicsTerms


def _solve_masked(A: Array, b: Array, keep: Array) -> Array:
    """Solve `A x = b` on the kept unknowns (the others are zero): the dropped
    rows and columns are replaced by the identity, so shapes stay static."""
    A = jnp.where(keep[:, None] & keep[None, :], A, jnp.diag(jnp.where(keep, 0.0, 1.0)))
    return jnp.where(keep, jnp.linalg.solve(A, jnp.where(keep, b, 0.0)), 0.0)


class NullSpaceProjection(AbstractFormulation):
    """Project the equations of motion onto the null space of `C`.

    `V^T M v_dot = V^T F` (no constraint force does work along `null(C)`)
    together with `C v_dot = Gamma`, where `V` spans `null(C)`; redundant
    rows of `C` are harmless. The multipliers are the minimum-norm solution
    of `C^T lambda = F - M v_dot`: they equal the pseudoinverse's, and agree
    with every other formulation in the unique reactions only.

    **Arguments:**
    - `basis`: how `V` is built at every evaluation:
      - `"svd"` (default): right singular vectors of `C`;
      - `"qr"`: the trailing columns of a pivoted QR of `C^T`;
      - `"local"`: the orthogonal complement of Blajer et al. (paper 004, eqs.
        17-18) from the elements' local constraint frames: jmbs's rows are
        already the local constraint functions (`C_hat = I`), so
        `V^T = (J')^-1 D'^T` partitions the coordinates into `nc` dependent
        ones (the best-conditioned block `J_2` of `C`, chosen by a pivoted QR
        at every evaluation, as step 6 of the paper suggests) and `nv - nc`
        independent ones, `V = [I; -J_2^-1 J_1]`. Needs independent
        constraints (no redundancy).
    - `rtol`: singular values (or `|R_ii|`) below `rtol` times the largest
      count as zero, deciding the rank at every evaluation. It must sit well
      above the integrator's error: off the constraint manifold by `e`, a
      redundant row separates from the others by a singular value of order
      `e`, and treating it as independent would amplify the inconsistent part
      of `Gamma` by `1/e` (the motion then jitters and steps get rejected).
    """

    basis: Literal["svd", "qr", "local"] = "svd"
    rtol: float = 1e-6

    def __check_init__(self):
        if self.basis not in ("svd", "qr", "local"):
            raise ValueError(f"NullSpaceProjection(basis={self.basis!r}): choose 'svd', 'qr' or 'local'")

    def prepare(self, model: Model, q, t) -> "NullSpaceProjection":
        if self.basis == "local":
            from .._assembly import constraint_matrix

            C = np.asarray(constraint_matrix(model, q, t))
            s = np.linalg.svd(C, compute_uv=False)
            r = int(np.sum(s > self.rtol * s[0])) if s.size else 0
            if r < model.nc:
                raise ValueError(
                    f"NullSpaceProjection(basis='local') needs independent constraints, but this "
                    f"model has {model.nc} constraint rows of rank {r} (redundancy {model.nc - r}); "
                    "use basis='svd' or 'qr', which handle redundant constraints")
        return self

    def solve(self, terms: DynamicsTerms):
        M, F, C, gamma = terms.M, terms.F, terms.C, terms.gamma
        nc, nv = C.shape
        if self.basis == "svd":
            U, s, Vt = jnp.linalg.svd(C, full_matrices=True)
            V = Vt.T
            k = min(nc, nv)
            rng = jnp.zeros(nv, bool).at[:k].set(s[:k] > self.rtol * s[0])
            s_inv = jnp.where(rng[:k], 1.0 / jnp.where(rng[:k], s[:k], 1.0), 0.0)
            # Particular solution of C v = Gamma and the minimum-norm multipliers share the SVD.
            v_p = V[:, :k] @ (s_inv * (U[:, :k].T @ gamma))
            Vn = V * (~rng)[None, :]
            z = _solve_masked(Vn.T @ M @ Vn, Vn.T @ (F - M @ v_p), ~rng)
            v_dot = v_p + Vn @ z
            lam = U[:, :k] @ (s_inv * (V[:, :k].T @ (F - M @ v_dot)))
            return v_dot, lam
        if self.basis == "qr":
            Q, R, P = jsl.qr(C.T, pivoting=True)  # C^T[:, P] = Q R
            k = min(nc, nv)
            d = jnp.abs(jnp.diagonal(R)[:k])
            rng = d > self.rtol * d[0]
            # C v = Gamma: R^T Q^T v = Gamma[P]; on the kept (leading) pivots.
            w = _solve_masked(R[:k, :k].T, gamma[P][:k], rng)
            v_p = Q[:, :k] @ w
            null = jnp.ones(nv, bool).at[:k].set(~rng)
            Vn = Q * null[None, :]
            z = _solve_masked(Vn.T @ M @ Vn, Vn.T @ (F - M @ v_p), null)
            v_dot = v_p + Vn @ z
        else:
            _, _, P = jsl.qr(C, pivoting=True, mode="r")  # C[:, P[:nc]] = J_2, best conditioned
            J2, J1 = C[:, P[:nc]], C[:, P[nc:]]
            V = jnp.zeros((nv, nv - nc)).at[P[nc:]].set(jnp.eye(nv - nc))
            V = V.at[P[:nc]].set(-jnp.linalg.solve(J2, J1))
            v_dot = jnp.linalg.solve(jnp.concatenate([V.T @ M, C]), jnp.concatenate([V.T @ F, gamma]))
        lam = jnp.linalg.lstsq(C.T, F - M @ v_dot, rcond=self.rtol)[0]
        return v_dot, lam
