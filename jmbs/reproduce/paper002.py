"""Paper 002 (González, Kövecses, Teichmann, Courchesne) reproduced with the library's
fixed-step stepper: the Bricard under gravity, h = 1e-2, with rigid joints (they lock),
angular compliance in the joints and projection (both restore the motion); its Fig. 2.

Host-side (runs and figures); `jmbs demo` and the tests call it.
"""

import jax
import jax.numpy as jnp
import numpy as np

import jmbs

STEP = 1e-2  # the paper's h
T_END = 10.0  # the paper's run
JOINTS = tuple(f"J{k}" for k in range(1, 7))
# Angular compliance of every joint (rad/(N m), i.e. 1e5 N m/rad) on the two moment rows
# of each revolute; the force rows stay rigid. The paper gives no value.
ANGULAR_COMPLIANCE = 1e-5
TRACKED = "J3"  # the paper's P2, starting at (1, -1, 0)


def solvers(h: float = STEP) -> dict[str, "jmbs.RegularizedEuler"]:
    """The paper's three steppers: rigid joints, angular compliance, rigid + projection."""
    angular = {f"{j}.{c}": ANGULAR_COMPLIANCE for j in JOINTS for c in ("Mx", "My")}
    return {"rigid joints": jmbs.RegularizedEuler(h),
            "angular compliance": jmbs.RegularizedEuler(h, compliance=angular),
            "rigid + projection": jmbs.RegularizedEuler(h, projection=True)}


def run(t1: float = T_END, h: float = STEP, every: int = 1) -> dict[str, dict]:
    """The three runs of the Bricard (`jmbs.examples.bricard()`) over `t1`, saved every
    `every` steps: per run `ts`, `x` (of J3), `violation`, `step_rank` (the rank its
    step decides at each saved state), `unique` (joints with a unique reaction at
    each saved state), `solution`, and for rigid joints the locking diagnosis (`lock`:
    the first saved time whose step sees every row independent, with x and the
    violation there; None if it never does)."""
    model = jmbs.examples.bricard()
    n = int(round(t1 / h))
    saveat = h * np.arange(0, n + 1, every)
    out = {}
    for name, solver in solvers(h).items():
        sol = jmbs.simulate(model, t1, solver=solver, saveat=saveat, throw=False)
        rank = np.asarray(jax.jit(jax.vmap(
            lambda q, t, s=solver: _rank(s.step_matrix(model, q, t), s.rtol)))(sol.q, sol.ts))
        x = np.asarray(sol.reactions.point(TRACKED))[:, 0]
        viol = np.asarray(sol.violation)
        full = np.flatnonzero(rank == model.nc)
        lock = None
        if full.size and solver.compliance is None:
            k = full[0]
            lock = {"t": float(saveat[k]), "x": float(x[k]), "violation": float(viol[k])}
        out[name] = {"ts": np.asarray(sol.ts), "x": x, "violation": viol, "step_rank": rank,
                     "energy": np.asarray(sol.energy),
                     "unique": np.asarray(sol.reactions.unique), "solution": sol, "lock": lock,
                     "x_min": float(x.min()), "max_violation": float(viol.max())}
    return out


def _rank(A, rtol):
    s = jnp.linalg.svd(A, compute_uv=False)
    return jnp.sum(s > rtol * s[0])


def plot(runs: dict[str, dict], axes=None):
    """Paper 002's Fig. 2 from `run()`: x of J3 (P2) and the constraint violation
    against time, one line per stepper. Returns the figure."""
    import matplotlib.pyplot as plt

    if axes is None:
        fig, axes = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    fig = axes[0].figure
    styles = {"rigid joints": "C3-", "angular compliance": "C0-", "rigid + projection": "C2--"}
    for name, r in runs.items():
        axes[0].plot(r["ts"], r["x"], styles.get(name, "-"), lw=1.2, label=name)
        axes[1].semilogy(r["ts"], np.maximum(r["violation"], 1e-17), styles.get(name, "-"), lw=1.0)
        if r["lock"] is not None:
            axes[0].plot(r["lock"]["t"], r["lock"]["x"], "C3o", ms=5)
    axes[0].axhline(-1.0, color="0.6", lw=0.6)
    axes[0].axhline(1.0, color="0.6", lw=0.6)
    axes[0].set_ylabel("x of P2 (J3) [m]")
    axes[0].legend(fontsize=8, loc="lower left")
    axes[1].set_ylabel("max |Φ|")
    axes[1].set_xlabel("t [s]")
    axes[0].set_title(f"Bricard, jmbs.RegularizedEuler(h = {STEP:g}) (paper 002, Fig. 2)")
    fig.tight_layout()
    return fig
