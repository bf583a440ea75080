"""An external reference for the Bricard benchmark: relative coordinates, SciPy.

    .venv/bin/python benchmarks/bricard_reference.py [--t1 10] [--tol 1e-13]

The IFToMM A04 Bricard written here from its definition, with nothing from jmbs: five
1 m, 1 kg rods of square section 0.1 m in a closed chain of six revolute joints (points
and axes below), gravity -y, released from rest. The coordinates are the five joint
angles of the open chain ground-rod1-...-rod5 (joints J1..J5; a body's pose is the
product of exponentials of the joints before it), the sixth joint a closure of five
equations (J6's point and axis), one of them redundant. The equations of motion are
Lagrange's with multipliers,

    M(th) th'' + h(th, th') = Phi_th^T lam,     Phi_th th'' = -(d/dt Phi_th) th',

`M` and `h` from the kinetic and potential energies (derivatives by JAX's automatic
differentiation of the energies written here), `th''` from the least-squares
(minimum-norm in `lam`) solution of the bordered system, which is unique in `th''`
even though `Phi_th` is rank deficient. SciPy's DOP853 integrates it at
rtol = atol = `--tol`; the closure residual is reported along the run (it is not
projected: at 1e-13 the drift stays far below the benchmark's 1e-6 budget).

The tracked point is J3 (the end of rod 2), which starts at (1, -1, 0).
`reference(ts)` returns its x at the times `ts`; bench_dynamics.py scores jmbs and
Exudyn against it.
"""

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp

jax.config.update("jax_enable_x64", True)

POINTS = np.array([[0, 0, 0], [1, 0, 0], [1, -1, 0], [1, -1, 1], [0, -1, 1], [0, 0, 1]], float)
AXES = np.eye(3)[[1, 2, 0, 1, 2, 0]]  # J1..J6
MASS, WIDTH, G = 1.0, 0.1, 9.81


def _rotation(axis, angle):
    """Rodrigues' rotation about a unit axis."""
    K = jnp.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return jnp.eye(3) + jnp.sin(angle) * K + (1.0 - jnp.cos(angle)) * (K @ K)


def poses(th):
    """`[(R_k, r_k)]` for rods 1..5: `x -> R_k x + r_k` maps a reference point of rod k to
    its current place (the product of exponentials of joints 1..k about their reference
    axes through their reference points)."""
    R, r, out = jnp.eye(3), jnp.zeros(3), []
    for k in range(5):
        Rj = _rotation(AXES[k], th[k])
        # compose with the rotation about the reference axis through the reference point
        R, r = R @ Rj, r + R @ (POINTS[k] - Rj @ POINTS[k])
        out.append((R, r))
    return out


def _centres_and_inertias():
    c = (POINTS[:-1] + POINTS[1:]) / 2
    u = POINTS[1:] - POINTS[:-1]
    ixx, iyy = MASS * WIDTH**2 / 6, MASS * (1.0 + WIDTH**2) / 12
    inertia = [iyy * np.eye(3) + (ixx - iyy) * np.outer(e, e) for e in u]  # reference, global
    return c, inertia


CENTRES, INERTIAS = _centres_and_inertias()


def energies(th, w):
    """Kinetic and potential energy of the chain at angles `th`, rates `w`."""
    def centres(th):
        return jnp.stack([R @ c + r for (R, r), c in zip(poses(th), CENTRES)])

    def rotations(th):
        return jnp.stack([R for R, _ in poses(th)])

    x, xd = jax.jvp(centres, (th,), (w,))
    R, Rd = jax.jvp(rotations, (th,), (w,))
    T = 0.5 * MASS * jnp.sum(xd**2)
    for k in range(5):
        W = Rd[k] @ R[k].T  # skew of the global angular velocity
        omega = jnp.array([W[2, 1], W[0, 2], W[1, 0]])
        T += 0.5 * omega @ (R[k] @ INERTIAS[k] @ R[k].T) @ omega
    V = MASS * G * jnp.sum(x[:, 1])
    return T, V


def closure(th):
    """J6: rod 5's copy of the point (0, 0, 1) and of the axis x stay the ground's."""
    R, r = poses(th)[4]
    d = R @ POINTS[5] + r - POINTS[5]
    a = R @ AXES[5]
    return jnp.concatenate([d, jnp.array([a[1], a[2]])])


@jax.jit
def accelerations(th, w):
    lag = lambda th, w: energies(th, w)[0] - energies(th, w)[1]  # noqa: E731
    M = jax.hessian(lag, argnums=1)(th, w)
    dL_dth = jax.grad(lag, argnums=0)(th, w)
    mixed = jax.jacfwd(jax.grad(lag, argnums=1), argnums=0)(th, w)  # d/dth of dL/dw
    h = mixed @ w - dL_dth
    A = jax.jacfwd(closure)(th)
    gamma = -jax.jvp(lambda t: jax.jacfwd(closure)(t) @ w, (th,), (w,))[1]
    K = jnp.block([[M, A.T], [A, jnp.zeros((5, 5))]])
    sol = jnp.linalg.lstsq(K, jnp.concatenate([-h, gamma]), rcond=1e-13)[0]
    return sol[:5]


@jax.jit
def tracked_x(th):
    R, r = poses(th)[1]
    return (R @ POINTS[2] + r)[0]


def reference(ts, tol: float = 1e-13) -> dict:
    """x of J3 at `ts` (from t = 0), the run's closure residual and its cost."""
    def rhs(t, y):
        return np.concatenate([y[5:], np.asarray(accelerations(jnp.asarray(y[:5]), jnp.asarray(y[5:])))])

    start = time.perf_counter()
    sol = solve_ivp(rhs, (0.0, float(ts[-1])), np.zeros(10), method="DOP853", t_eval=ts,
                    rtol=tol, atol=tol)
    seconds = time.perf_counter() - start
    assert sol.success, sol.message
    x = np.array([float(tracked_x(jnp.asarray(y))) for y in sol.y[:5].T])
    residual = max(float(np.abs(np.asarray(closure(jnp.asarray(y)))).max()) for y in sol.y[:5].T)
    return {"x": x, "closure_residual": residual, "rhs_calls": int(sol.nfev), "seconds": seconds}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--t1", type=float, default=10.0)
    ap.add_argument("--tol", type=float, default=1e-13)
    args = ap.parse_args()
    ts = np.linspace(0.0, args.t1, round(10 * args.t1) + 1)
    ref = reference(ts, args.tol)
    other = reference(ts, args.tol * 10)
    print(f"t1 = {args.t1} s, DOP853 rtol = atol = {args.tol:g}: {ref['rhs_calls']} right-hand "
          f"sides, {ref['seconds']:.1f} s; closure residual {ref['closure_residual']:.1e}")
    print(f"against rtol = atol = {args.tol * 10:g}: max |dx| {np.abs(ref['x'] - other['x']).max():.1e}")
    for t in (t for t in (2.5, 5.0) if t <= args.t1):
        k = int(round(t * 10))
        print(f"x(J3, {t} s) = {ref['x'][k]:.9f}")


if __name__ == "__main__":
    main()
