# %% [markdown]
# # Bricard mechanism under gravity: drift, locking and its cures (González et al., paper 002)
#
# Five 1 m, 1 kg rods and six revolute joints (`examples.bricard`): Grübler count
# 0, mobility 1, one redundant constraint everywhere. Released at rest, the joint
# point J3 (P2 of the paper, starting at (1, -1, 0)) swings between x = +1 and
# x = -1. The paper integrates with a semi-implicit Euler step of h = 1e-2 s and
# finds that a constraint violation below 1e-4 makes the rigid-joint equations
# incompatible and locks the mechanism; compliant joints or projecting positions
# and velocities restore the motion, projection with a violation at rounding level.
#
# Runs (10 s; `--short`: 5.5 s, enough for the first swing and the return):
#
# - **paper's stepper, rank per step**: `jmbs.RegularizedEuler(h=1e-2)` with rigid joints
#   (paper 002's eq. 1: velocities and multipliers of `C v+ + b + Phi / h = 0` solved
#   together, `q+ = retract(q, h v+)`), the rank of the step's matrix decided at every
#   step as a generic solver does (`STEP_RTOL`);
# - **paper's stepper, rank fixed**: the same with the rank of `C` decided once at t = 0
#   (what jmbs's formulations do);
# - **paper's stepper + projection**: the same plus the projection of positions and
#   velocities after each step (`projection=True`, paper 002, eqs. 2-3);
# - **Euler, none**: `jmbs.simulate`, explicit Euler, dt = 1e-2, no stabilization;
# - **Baumgarte**: `jmbs.simulate`, Tsit5, rtol = atol = 1e-8, `Baumgarte(5, 5)`;
# - **Projection**: `jmbs.simulate`, Tsit5, rtol = atol = 1e-8, `Projection()`;
# - **Penalty**: `jmbs.simulate`, compliant joints (`Penalty`, forces 1e6 N/m and
#   100 N s/m, moments 1e5 N m/rad and 1 N m s/rad), no stabilization, Tsit5 with
#   constant steps of 1e-4 s (2e-4 s is unstable: the state becomes NaN).
#
# Run: `.venv/bin/python experiments/dynamics_bricard.py [--short] [--out DIR]`

# %%
import sys
import time
from pathlib import Path

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

import jmbs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import format_table, run, save_figure, write_outputs  # noqa: E402

H = 1e-2  # the paper's step
TRACKED = ("rod2", (0.5, 0.0, 0.0))  # joint J3 (P2) at the end of rod 2, starting at (1, -1, 0)
JOINTS = tuple(f"J{k}" for k in range(1, 7))
PENALTY = jmbs.Penalty(
    stiffness={**{j: 1e6 for j in JOINTS}, **{f"{j}.{c}": 1e5 for j in JOINTS for c in ("Mx", "My")}},
    damping={**{j: 1e2 for j in JOINTS}, **{f"{j}.{c}": 1.0 for j in JOINTS for c in ("Mx", "My")}})


def paper_stepper(model, t1: float, h: float, rank: str | None, project: bool = False):
    """Paper 002's stepper as the library runs it: `jmbs.RegularizedEuler(h)` with rigid
    joints (eq. 1 without compliance), stepped by the pure `jmbs.step` in a `lax.scan`.

    `rank`: `None` decides the rank of the step's matrix at every step (the library's
    default, `STEP_RTOL`), `"fixed"` keeps the rank of `C` at the initial state (by
    `jmbs.internal.constraint_rank`). With `project`, positions and velocities are then
    projected after each step (paper 002, eqs. 2-3). Returns `(ts, q, v, violation,
    steps)` at every step."""
    n = int(round(t1 / h))
    r0 = jmbs.internal.constraint_rank(model, model.q0, 0.0) if rank == "fixed" else None
    solver = jmbs.RegularizedEuler(h, rank=r0, projection=project)

    def body(state, _):
        state = jmbs.step(model, state, solver=solver)
        return state, (state.q, state.v, jnp.max(jnp.abs(jmbs.phi(model, state.q, state.t))))

    s0 = jmbs.StepState.initial(model)
    q, v, viol = jax.jit(lambda s: jax.lax.scan(body, s, None, length=n)[1])(s0)
    ts = h * np.arange(n + 1)
    q = np.vstack([np.asarray(model.q0)[None], np.asarray(q)])
    v = np.vstack([np.asarray(model.v0)[None], np.asarray(v)])
    return ts, q, v, np.r_[0.0, np.asarray(viol)], n


def extremum(ts, x, lo, hi, sign):
    """`(t, x)` of the extremum of `sign * x` in the window `[lo, hi]` (parabolic refinement)."""
    idx = np.flatnonzero((ts >= lo) & (ts <= hi))
    if idx.size == 0 or not np.all(np.isfinite(x[idx])):
        return None, None
    i = idx[np.argmax(sign * x[idx])]
    if 0 < i < len(ts) - 1 and idx[0] < i < idx[-1]:
        a, b, c = x[i - 1], x[i], x[i + 1]
        den = a - 2 * b + c
        if den != 0:
            d = 0.5 * (a - c) / den
            return float(ts[i] + d * (ts[1] - ts[0])), float(b - 0.25 * (a - c) * d)
    return float(ts[i]), float(x[i])


def main(short: bool = False, out: Path | None = None) -> dict:
    t1 = 5.5 if short else 10.0
    ts = np.linspace(0.0, t1, int(round(50 * t1)) + 1)  # saved every 0.02 s
    model = jmbs.examples.bricard()
    point = jax.jit(jax.vmap(lambda q: model.point(q, TRACKED[0], jnp.asarray(TRACKED[1]))))
    energy = jax.jit(jax.vmap(lambda q, v: jmbs.energy(model, q, v)))
    tight = diffrax.PIDController(rtol=1e-8, atol=1e-8)

    runs = {}

    def record(name, t, q, v, viol, steps, result, seconds):
        q, v = np.asarray(q), np.asarray(v)
        runs[name] = {"ts": np.asarray(t), "x": np.asarray(point(q))[:, 0], "violation": np.asarray(viol),
                      "energy": np.asarray(energy(q, v)), "steps": int(steps), "result": result,
                      "seconds": seconds}

    for name, rank, project in (("paper's stepper, rank per step", None, False),
                                ("paper's stepper, rank fixed", "fixed", False),
                                ("paper's stepper + projection", "fixed", True)):
        start = time.perf_counter()
        t, q, v, viol, n = paper_stepper(model, t1, H, rank, project)
        record(name, t, q, v, viol, n, "success" if np.all(np.isfinite(q)) else "not finite",
               time.perf_counter() - start)

    sims = {
        "Euler, none": dict(stabilization=None, solver=diffrax.Euler(), dt0=H),
        "Baumgarte": dict(stabilization=jmbs.Baumgarte(5.0, 5.0), stepsize_controller=tight),
        "Projection": dict(stabilization=jmbs.Projection(), stepsize_controller=tight),
        "Penalty": dict(formulation=PENALTY, stabilization=None, dt0=1e-4, max_steps=200_000),
    }
    for name, kw in sims.items():
        start = time.perf_counter()
        sol = jmbs.simulate(model, t1, saveat=ts, throw=False, reactions=False, **kw)
        jax.block_until_ready(sol.q)
        record(name, sol.ts, sol.q, sol.v, sol.violation, sol.stats["num_accepted_steps"], sol.message,
               time.perf_counter() - start)

    rows, results = [], {"t1": t1, "h": H, "runs": {}}
    for name, r in runs.items():
        t, x, e = r["ts"], r["x"], r["energy"]
        moves = float(np.nanmax(x) - np.nanmin(x)) > 0.05
        t_min, x_min = extremum(t, x, 1.25, 3.75, -1) if moves else (None, None)
        t_max, x_max = extremum(t, x, 3.75, 6.25, +1) if moves else (None, None)
        t_min2, x_min2 = extremum(t, x, 6.25, 8.75, -1) if moves and t1 >= 8.75 else (None, None)
        rel_e = float(np.nanmax(np.abs(e - e[0])) / abs(e[0]))
        viol = float(np.nanmax(r["violation"]))
        res = {"moves": moves, "x_range": [float(np.nanmin(x)), float(np.nanmax(x))],
               "t_min": t_min, "x_min": x_min, "t_return": t_max, "x_return": x_max,
               "t_min2": t_min2, "x_min2": x_min2,
               "x_end": float(x[-1]), "max_violation": viol, "relative_energy_error": rel_e,
               "steps": r["steps"], "result": r["result"], "seconds": round(r["seconds"], 1)}
        results["runs"][name] = res

        def ext(tt, xx):
            return "-" if tt is None else f"{tt:.3f} ({xx:.4f})"

        rows.append([name, "yes" if moves else f"no: x in [{np.nanmin(x):.4f}, {np.nanmax(x):.4f}]",
                     ext(t_min, x_min), ext(t_max, x_max),
                     *([ext(t_min2, x_min2)] if t1 >= 8.75 else []), f"{x[-1]:.4f}", f"{viol:.1e}",
                     f"{rel_e:.1e}", r["steps"], r["result"] if r["result"] == "success" else "FAILED",
                     f"{r['seconds']:.0f}"])
    head = ["method", "moves", "1st minimum t (x)", "return max t (x)",
            *(["2nd minimum t (x)"] if t1 >= 8.75 else []), f"x({t1:g})", "max |Phi|",
            "max|dE|/|E0|", "steps", "result", "wall s"]
    text = "\n".join([
        f"Bricard mechanism, released at rest under gravity, {t1:g} s; x of joint J3 (P2), predicted "
        "to swing between x = +1 and x = -1",
        f"E0 = {runs['Projection']['energy'][0]:.3f} J (potential relative to y = 0); wall time "
        "includes compilation", "",
        format_table(head, rows)])
    print(text)

    if out is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(3, 1, sharex=True, figsize=(8, 9))
        styles = {"paper's stepper, rank per step": "C3-", "paper's stepper, rank fixed": "C1-",
                  "paper's stepper + projection": "C2:", "Euler, none": "C5-", "Baumgarte": "C4--",
                  "Projection": "k-", "Penalty": "C0-."}
        for name, r in runs.items():
            t = r["ts"]
            axes[0].plot(t, r["x"], styles[name], lw=1.2, label=name)
            axes[1].semilogy(t, np.maximum(r["violation"], 1e-17), styles[name], lw=1.0)
            axes[2].semilogy(t, np.maximum(np.abs(r["energy"] - r["energy"][0]) / abs(r["energy"][0]), 1e-17),
                             styles[name], lw=1.0)
        axes[0].set_ylabel("x of J3 (P2) [m]")
        axes[0].legend(fontsize=7, loc="lower left", ncol=2)
        axes[1].set_ylabel("max |Phi|")
        axes[2].set_ylabel("|E - E0| / |E0|")
        axes[2].set_xlabel("t [s]")
        fig.suptitle("Bricard mechanism (paper 002, Fig. 2)")
        fig.tight_layout()
        save_figure(out, "dynamics_bricard", fig)
        plt.close(fig)
    write_outputs(out, "dynamics_bricard", [text, ""], results)
    return results


# %%
if __name__ == "__main__":
    run(main, __doc__)
