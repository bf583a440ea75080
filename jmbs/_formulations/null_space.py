"""Null-space projection: `[V^T M; C] v_dot = [V^T F; Gamma]` with `V` a basis of `null(C)`."""

import functools
from typing import Literal

import equinox as eqx
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
from jaxtyping import Array

from .._linalg import RANK_RTOL, kept, solve_masked, top_mask
from .._misc import as_float
from .._model import Model
from .._rank import constraint_rank
from .._terms import DenseTerms
from .base import AbstractFormulation, RankState, all_rigid, require_values


class NullSpaceProjection(AbstractFormulation[RankState]):
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
    - `rtol`: tolerance of the rank decision, made once by `init` at the
      initial state (on the constraints) and kept for the run: off the
      constraint manifold by `e` (as at an integrator's inner stages) a
      redundant row separates from the others by a singular value of order
      `e`, and deciding the rank there would amplify the inconsistent part of
      `Gamma` by `1/e`. So the `rank` leading singular values (or pivots)
      span the range at every evaluation.
    - `rank`: the rank of `C`, if known: `init` then does not look at values
      (so it works under `jax.vmap` or `jax.grad` over models).
    """

    basis: Literal["svd", "qr", "local"] = eqx.field(static=True, default="svd")
    rtol: float = eqx.field(converter=as_float, default=RANK_RTOL)
    rank: int | None = eqx.field(static=True, default=None)

    def __check_init__(self):
        if self.basis not in ("svd", "qr", "local"):
            raise ValueError(f"NullSpaceProjection(basis={self.basis!r}): choose 'svd', 'qr' or 'local'")

    def init(self, model: Model, q, t) -> RankState:
        r = self.rank
        if r is None:
            require_values(self, model, q, t)
            r = constraint_rank(model, q, t, rtol=self.rtol)
        if self.basis == "local" and r < model.nc:
            raise ValueError(
                f"NullSpaceProjection(basis='local') needs independent constraints, but this "
                f"model has {model.nc} constraint rows of rank {r} (redundancy {model.nc - r}); "
                "use basis='svd' or 'qr', which handle redundant constraints")
        return RankState(all_rigid(model), r)

    def solve(self, state: RankState, terms: DenseTerms):
        return _solve(self.basis, state.rank, terms.M, terms.F, terms.C, terms.gamma)


class _SVD(eqx.Module):
    """`C = U diag(s) V^T` with the range (`rng`, the leading `rank` values) inverted."""

    U: Array
    V: Array
    s_inv: Array
    rng: Array  # (nv,): True on the range's columns of V

    def __init__(self, C: Array, rank: int):
        nc, nv = C.shape
        k = min(nc, nv)
        self.U, s, Vt = kept(jnp.linalg.svd(C, full_matrices=True))
        self.V = Vt.T
        self.rng = jnp.zeros(nv, bool).at[:k].set(jnp.asarray(top_mask(k, rank)))
        self.s_inv = jnp.where(self.rng[:k], 1.0 / jnp.where(self.rng[:k], s[:k], 1.0), 0.0)

    def pinv(self, y: Array) -> Array:
        """`C^+ y`."""
        k = self.s_inv.shape[0]
        return self.V[:, :k] @ (self.s_inv * (self.U[:, :k].T @ y))

    def pinv_t(self, x: Array) -> Array:
        """`(C^+)^T x`."""
        k = self.s_inv.shape[0]
        return self.U[:, :k] @ (self.s_inv * (self.V[:, :k].T @ x))

    def range_project(self, y: Array) -> Array:
        """`C C^+ y`: the projection onto `range(C)`."""
        k = self.s_inv.shape[0]
        return self.U[:, :k] @ (self.rng[:k] * (self.U[:, :k].T @ y))

    def null(self) -> Array:
        """`V` with its range columns zeroed: a basis of `null(C)` (padded)."""
        return self.V * (~self.rng)[None, :]


def _svd_solve(svd: _SVD, M: Array, F: Array, gamma: Array):
    # Particular solution of C v = Gamma and the minimum-norm multipliers share the SVD.
    v_p = svd.pinv(gamma)
    Vn = svd.null()
    z = solve_masked(Vn.T @ M @ Vn, Vn.T @ (F - M @ v_p), ~svd.rng)
    v_dot = v_p + Vn @ z
    return v_dot, svd.pinv_t(F - M @ v_dot)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0, 1))
def _solve(basis: str, rank: int, M: Array, F: Array, C: Array, gamma: Array):
    """`(v_dot, lambda)`; differentiated implicitly (see `_solve_jvp`)."""
    nc, nv = C.shape
    k = min(nc, nv)
    if basis == "svd":
        return _svd_solve(_SVD(C, rank), M, F, gamma)
    if basis == "qr":
        Q, R, P = kept(jsl.qr(C.T, pivoting=True))  # C^T[:, P] = Q R
        rng = jnp.asarray(top_mask(k, rank))
        # C v = Gamma: R^T Q^T v = Gamma[P]; on the kept (leading) pivots.
        w = solve_masked(R[:k, :k].T, gamma[P][:k], rng)
        v_p = Q[:, :k] @ w
        null = jnp.ones(nv, bool).at[:k].set(~rng)
        Vn = Q * null[None, :]
        z = solve_masked(Vn.T @ M @ Vn, Vn.T @ (F - M @ v_p), null)
        v_dot = v_p + Vn @ z
    else:
        _, P = jsl.qr(C, pivoting=True, mode="r")  # C[:, P[:nc]] = J_2, best conditioned
        J2, J1 = C[:, P[:nc]], C[:, P[nc:]]
        V = jnp.zeros((nv, nv - nc)).at[P[nc:]].set(jnp.eye(nv - nc))
        V = V.at[P[:nc]].set(-jnp.linalg.solve(J2, J1))
        v_dot = jnp.linalg.solve(jnp.concatenate([V.T @ M, C]), jnp.concatenate([V.T @ F, gamma]))
    return v_dot, _min_norm_multipliers(C, F - M @ v_dot, rank)


@_solve.defjvp
def _solve_jvp(basis, rank, primals, tangents):
    """Implicit differentiation of `M v_dot + C^T lambda = F`, `C v_dot = Gamma`
    (least squares where `Gamma` is inconsistent), `lambda` of minimum norm, at
    constant rank. Only the SVD's values enter, never its derivatives, which do
    not exist where singular values repeat."""
    M, F, C, gamma = primals
    dM, dF, dC, dgamma = tangents
    svd = _SVD(C, rank)
    v_dot, lam = (_svd_solve(svd, M, F, gamma) if basis == "svd"
                  else _solve(basis, rank, M, F, C, gamma))
    # Accelerations: C dv = dGamma - dC v_dot (plus the least-squares residual's
    # share), V_n^T M dv = V_n^T (dF - dM v_dot - dC^T lambda).
    dv_p = svd.pinv(dgamma - dC @ v_dot) + svd.pinv(svd.pinv_t(dC.T @ (gamma - C @ v_dot)))
    Vn = svd.null()
    dz = solve_masked(Vn.T @ M @ Vn, Vn.T @ (dF - dM @ v_dot - dC.T @ lam - M @ dv_p), ~svd.rng)
    dv_dot = dv_p + Vn @ dz
    # Multipliers: the derivative of lambda = (C^T)^+ g, g = F - M v_dot.
    g = F - M @ v_dot
    dg = dF - dM @ v_dot - M @ dv_dot
    u = dC @ svd.pinv(lam)
    dlam = (svd.pinv_t(dg - dC.T @ lam) + svd.pinv_t(svd.pinv(dC @ (g - C.T @ lam)))
            + u - svd.range_project(u))
    return (v_dot, lam), (dv_dot, dlam)


def _min_norm_multipliers(C: Array, g: Array, rank: int) -> Array:
    """Minimum-norm `lambda` with `C^T lambda = g` on the leading `rank` singular values."""
    U, s, Vt = kept(jnp.linalg.svd(C, full_matrices=False))
    keep = jnp.asarray(top_mask(s.shape[0], rank)) & (s > 0)
    return U @ (jnp.where(keep, 1.0 / jnp.where(keep, s, 1.0), 0.0) * (Vt @ g))
