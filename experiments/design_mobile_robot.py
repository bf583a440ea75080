# %% [markdown]
# # Design optimisation with optax: where to hitch the trolley, and how long its drawbar
#
# The mobile robot of `jmbs.examples.mobile_robot` (redundancy p = 2) tows its
# trolley through the paper's steering manoeuvre (`examples.steering_manoeuvre`:
# turn right, straight, turn left; 1 m/s, 12 s). Which hitch position and drawbar
# length load the hitch least?
#
# - **Design variables** (everything else as in the library's default robot):
#   the hitch offset `a`, the distance of the hitch A behind the platform centre
#   (the W3/W4 axle), and the drawbar length `l`, hitch to trolley wheel W5. The
#   trolley (5 kg, 0.5 kg m^2, its centre of mass over its wheel) keeps its mass and
#   inertia. A design is applied with `model.with_params` (points `A`, `W5` and the
#   trolley's position, all in the reference configuration, straight ahead), so the
#   mechanism closes by construction and the straight-ahead initial velocities stay
#   consistent.
# - **Constraints**: `-0.4 <= a <= 0.6`: the hitch on the platform's centre line,
#   from the front steering pivot's station (0.4 m ahead of the axle; the drawbar is
#   taken to pass above the platform, as with a fifth wheel) to the default's 0.1 m
#   tow bar behind the rear edge (x = -0.5); `0.3 <= l <= 1.2`; and `a + l >= 0.6`:
#   the trolley wheel at least 0.1 m behind the platform's rear edge. The default
#   design (a = 0.6, l = 0.6) starts on the hitch's upper bound.
# - **Objective**: a smooth peak of the hitch force, the p-norm
#   `J = (mean_t |F_A(t)|^p)^(1/p)` with p = 8 over the saved times (every 0.04 s;
#   `|F_A|^p` is computed as `(F_A . F_A)^(p/2)`, smooth also where the force
#   vanishes, as on the straight at the start). A is a unique reaction (its value
#   does not depend on how the redundancy is resolved), so its gradient is defined;
#   B, C, W1-W4 are not. The plain objective has an interior optimum (a grid scan
#   showed it before this script was written, and the full run ends there with the
#   gradient below 1 % of its initial size and every bound inactive): a hitch far
#   from the axle is swung sideways whenever the platform yaws, so the hitch force
#   falls as the hitch moves forward, up to just behind the axle; in `l` it falls
#   and rises again (a short drawbar turns the trolley through a short lever). So no
#   second consideration is needed. The robot is not propelled, only steered: the
#   trolley's pull changes its speed, hence where the platform itself goes.
# - **Optimiser**: `optax.adam` on the variables normalised to [0, 1] by their
#   bounds, cosine-decayed learning rate, and after each step the Euclidean
#   projection (in the normalised variables) onto the box and the clearance
#   half-plane: Dykstra's alternating projections with `optax.projections`
#   (`projection_box`, `projection_halfspace`).
# - **Gradients**: `jax.value_and_grad` through `jmbs.simulate` (Tsit5, constant
#   steps of 0.02 s, `Projection`, a checkpoint at every step; null-space
#   formulation prepared on the default robot), checked against central finite
#   differences at the initial design.
# - **Verification** of the final design: it assembles (`jmbs.assemble` from its
#   reference configuration), the bounds hold, and an independent re-simulation with
#   adaptive Tsit5 at rtol = atol = 1e-9 reproduces the objective's improvement, with
#   the constraint violation along the run. The adaptive runs cap the step at 0.1 s:
#   uncapped, the controller leaves the exact straight run of the first second with a
#   2 s step that jumps over the turn-in, all of whose stages see a constant steering
#   angle, and accepts a wrong trajectory (the same one at 1e-9 and at 1e-11).
#
# Short mode (the test suite): the first 5 s (the right turn and back to straight),
# steps of 0.05 s, 5 iterations.
#
# Run: `.venv/bin/python experiments/design_mobile_robot.py [--short] [--out DIR]`

# %%
import sys
import time
from pathlib import Path

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import optax

import jmbs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import format_table, run, save_figure, write_outputs  # noqa: E402

NAMES = ("hitch_offset", "drawbar")
LOWER = np.array([-0.4, 0.3])  # m
UPPER = np.array([0.6, 1.2])
SPAN = UPPER - LOWER
CLEARANCE = 0.6  # a + l >= CLEARANCE: trolley wheel 0.1 m behind the platform's rear edge (x = -0.5)
P = 8  # exponent of the smooth peak
SAVE_DT = 0.04  # s, spacing of the saved times the objective runs over
BOUNDS_TOL = 1e-9


def design_model(m0: jmbs.Model, x) -> jmbs.Model:
    """The robot `m0` with hitch offset `x[0]` and drawbar `x[1]` (traceable)."""
    a, l = x[0], x[1]
    wheel = jnp.stack([-(a + l), jnp.zeros_like(a)])
    return m0.with_params({"A.point": jnp.stack([-a, jnp.zeros_like(a)]), "W5.point": wheel,
                           "trolley.position": wheel})


def smooth_peak(F: jax.Array) -> jax.Array:
    """`(mean_t |F|^P)^(1/P)` of forces `F (T, 2)`: the p-norm over the saved times."""
    return jnp.mean(jnp.sum(F**2, axis=-1) ** (P / 2)) ** (1 / P)


def project(z: jax.Array, iterations: int = 500) -> jax.Array:
    """Euclidean projection of normalised variables `z` onto `[0, 1]^2` and the clearance
    half-plane `a + l >= CLEARANCE` (Dykstra's alternating projections, which converge to
    the projection onto the intersection, not just a point in it)."""
    normal = -jnp.asarray(SPAN)  # {z: normal . z <= offset} <=> a + l >= CLEARANCE
    offset = float(LOWER.sum() - CLEARANCE)
    p = q = jnp.zeros_like(z)
    for _ in range(iterations):
        y = optax.projections.projection_box(z + p, 0.0, 1.0)
        p = z + p - y
        z_new = optax.projections.projection_halfspace(y + q, normal, offset)
        q = y + q - z_new
        if float(jnp.max(jnp.abs(z_new - z))) < 1e-15:
            return z_new
        z = z_new
    return z


def feasible(x) -> bool:
    x = np.asarray(x)
    return bool(np.all(x >= LOWER - BOUNDS_TOL) and np.all(x <= UPPER + BOUNDS_TOL)
                and x.sum() >= CLEARANCE - BOUNDS_TOL)


def histories(sol: jmbs.Solution) -> dict:
    """The unique reactions plotted and tabulated: |F_A|, W5's side force, the drive force."""
    r = sol.reactions
    return {"ts": np.asarray(sol.ts), "A": np.linalg.norm(np.asarray(r.force("A")), axis=-1),
            "W5": np.asarray(r.components("W5", "Fn")), "drive": np.asarray(r.components("drive", "F")),
            "unique": bool(all(np.all(np.asarray(r.is_unique(k))) for k in ("A", "W5", "drive"))),
            "centre": np.asarray(sol.q)[:, :2], "angle": np.asarray(sol.q)[:, 2],
            "hitch": np.asarray(r.point("A")), "wheel": np.asarray(r.point("W5"))}


def main(short: bool = False, out: Path | None = None) -> dict:
    start = time.perf_counter()
    t1, dt, iterations, lr = (5.0, 0.05, 5, 0.05) if short else (12.0, 0.02, 60, 0.05)
    ts = jnp.linspace(0.0, t1, int(round(t1 / SAVE_DT)) + 1)
    m0 = jmbs.examples.mobile_robot()
    x0 = np.array([-float(m0.params()["A.point"][0]),
                   float(m0.params()["A.point"][0] - m0.params()["W5.point"][0])])
    # Under jax.grad the model is traced: prepare the formulation (its rank) on the
    # concrete default robot; every design has the same rank structure.
    formulation = jmbs.NullSpaceProjection().prepare(m0, m0.q0, 0.0)

    max_steps = int(round(t1 / dt)) + 8
    # A checkpoint at every step (the states are small). With diffrax's default number of
    # checkpoints (about sqrt(2 max_steps), the steps in between recomputed) and saved
    # times that fall on step ends, as here, the gradient came out wrong by up to 7e-4
    # (relative; the error depends on the number of checkpoints); with every step stored,
    # or with the saved times between step ends, it agrees with finite differences to 1e-9.
    adjoint = diffrax.RecursiveCheckpointAdjoint(checkpoints=max_steps)

    def objective(x):
        # A is unique in every design: its force is differentiable (the library refuses the
        # derivative of a non-unique reaction, e.g. B's, with an error).
        sol = jmbs.simulate(design_model(m0, x), t1, formulation=formulation, saveat=ts, dt0=dt,
                            stepsize_controller=diffrax.ConstantStepSize(), max_steps=max_steps,
                            adjoint=adjoint)
        F = sol.reactions.force("A")
        return smooth_peak(F), jnp.max(jnp.linalg.norm(F, axis=-1))

    value_and_grad = jax.jit(jax.value_and_grad(objective, has_aux=True))

    def evaluate(x):
        (J, peak), g = value_and_grad(jnp.asarray(x, float))
        return float(J), float(peak), np.asarray(g)

    # The optimisation, in normalised variables z = (x - LOWER) / SPAN.
    schedule = optax.cosine_decay_schedule(lr, iterations, alpha=0.1)
    optimiser = optax.adam(schedule)
    z = jnp.asarray((x0 - LOWER) / SPAN)
    state = optimiser.init(z)
    log = {"objective": [], "peak": [], "x": [], "gradient": []}
    first_seconds = None
    for k in range(iterations + 1):
        x = LOWER + np.asarray(z) * SPAN
        J, peak, g = evaluate(x)
        first_seconds = first_seconds or time.perf_counter() - start  # mostly compilation
        for key, value in zip(log, (J, peak, x.tolist(), g.tolist())):
            log[key].append(value)
        print(f"iteration {k:3d}: J = {J:.6f} N (max |F_A| {peak:.4f} N), hitch_offset = {x[0]:.4f} m, "
              f"drawbar = {x[1]:.4f} m  [{time.perf_counter() - start:.0f} s]", flush=True)
        if k == iterations:
            break
        updates, state = optimiser.update(jnp.asarray(g * SPAN), state, z)  # dJ/dz = dJ/dx * SPAN
        z = project(optax.apply_updates(z, updates))
    x_final = np.asarray(log["x"][-1])
    optimise_seconds = time.perf_counter() - start

    # Gradient check at the initial design: central differences of the same objective.
    h = 1e-5
    fd = np.array([(evaluate(x0 + h * e)[0] - evaluate(x0 - h * e)[0]) / (2 * h) for e in np.eye(2)])
    grad0, grad1 = np.asarray(log["gradient"][0]), np.asarray(log["gradient"][-1])
    fd_rel_error = float(np.max(np.abs(grad0 - fd)) / np.max(np.abs(fd)))

    # Verification: assembly, bounds, and an independent adaptive re-simulation.
    # dtmax: after the exact straight run of the first second the controller would grow
    # the step tenfold per step and jump over the whole turn-in (1-2 s) in one step whose
    # stages all lie where the steering is constant: an error estimate of zero and a
    # wrong trajectory at any tolerance.
    tight = diffrax.PIDController(rtol=1e-9, atol=1e-9, dtmax=0.1)
    verified, runs = {}, {}
    for name, x in (("initial", x0), ("final", x_final)):
        model = design_model(m0, jnp.asarray(x))
        sol = jmbs.simulate(model, t1, formulation=jmbs.NullSpaceProjection(), saveat=ts,
                            stepsize_controller=tight, max_steps=200_000)
        asm = jmbs.assemble(model, model.q0, full_output=True, throw=False)
        runs[name] = histories(sol)
        verified[name] = {"objective": float(smooth_peak(sol.reactions.force("A"))),
                          "max_A": float(np.max(runs[name]["A"])),
                          "max_W5": float(np.max(np.abs(runs[name]["W5"]))),
                          "max_drive": float(np.max(np.abs(runs[name]["drive"]))),
                          "ok": bool(sol.ok), "steps": int(sol.stats["num_accepted_steps"]),
                          "max_violation": float(np.max(np.asarray(sol.violation))),
                          "max_velocity_violation": float(np.max(np.asarray(sol.velocity_violation))),
                          "assembles": bool(asm.converged), "assembly_residual": float(asm.residual),
                          "assembly_moved": float(np.max(np.abs(np.asarray(asm.q - model.q0)))),
                          "feasible": feasible(x), "unique": runs[name]["unique"]}
    fin = verified["final"]
    seconds = time.perf_counter() - start

    design_initial = dict(zip(NAMES, map(float, x0)))
    design_final = dict(zip(NAMES, map(float, x_final)))
    J0, J1 = log["objective"][0], log["objective"][-1]
    V0, V1 = verified["initial"]["objective"], verified["final"]["objective"]
    lines = [f"Mobile robot: hitch and drawbar minimising the smooth peak of the hitch force |F_A| "
             f"(p-norm, p = {P}, over {len(ts)} saved times) over the steering manoeuvre, 0-{t1:g} s",
             f"optax.adam, cosine-decayed learning rate {lr:g} -> {0.1 * lr:g} (normalised variables), "
             f"{iterations} iterations, projection onto the bounds after each step; Tsit5, constant "
             f"steps of {dt:g} s; {optimise_seconds:.0f} s (first evaluation, mostly compilation: "
             f"{first_seconds:.0f} s)", "",
             format_table(["variable", "lower", "upper", "initial", "final"],
                          [[n, f"{lo:g}", f"{hi:g}", f"{a:.4f}", f"{b:.4f}"]
                           for n, lo, hi, a, b in zip(NAMES, LOWER, UPPER, x0, x_final)]
                          + [["a + l (>= clearance)", f"{CLEARANCE:g}", "", f"{x0.sum():.4f}",
                              f"{x_final.sum():.4f}"]]), "",
             format_table(["quantity [N]", "initial", "final", "change"],
                          [["J, optimiser (constant steps)", f"{J0:.6f}", f"{J1:.6f}", f"{J1 / J0 - 1:+.1%}"],
                           ["J, verified (adaptive Tsit5, 1e-9)", f"{V0:.6f}", f"{V1:.6f}",
                            f"{V1 / V0 - 1:+.1%}"]]
                          + [[label, f"{verified['initial'][k]:.4f}", f"{fin[k]:.4f}",
                              f"{fin[k] / verified['initial'][k] - 1:+.1%}"]
                             for label, k in (("max |F_A| (verified)", "max_A"),
                                              ("max |W5 side force| (verified)", "max_W5"),
                                              ("max |drive force| (verified)", "max_drive"))]), "",
             f"gradient at the initial design: {np.array2string(grad0, precision=6)} N/m; central "
             f"differences (h = {h:g} m): {np.array2string(fd, precision=6)}; relative error "
             f"{fd_rel_error:.1e}",
             f"gradient at the final design: {np.array2string(grad1, precision=4)} N/m (at the "
             f"initial design: |grad| = {np.linalg.norm(grad0):.3g}); J changed by "
             f"{abs(J1 - log['objective'][-6]):.1e} N over the last 5 iterations",
             f"final design: bounds hold: {fin['feasible']}; assembles: {fin['assembles']} (max |Phi| "
             f"{fin['assembly_residual']:.1e}, q moved {fin['assembly_moved']:.1e}); adaptive run "
             f"{'ok' if fin['ok'] else 'FAILED'} in {fin['steps']} steps, max |Phi| "
             f"{fin['max_violation']:.1e}, max |C v + b| {fin['max_velocity_violation']:.1e}; "
             f"reactions A, W5, drive unique throughout: {fin['unique']}",
             f"total {seconds:.0f} s"]
    text = "\n".join(lines)
    print(text)

    results = {"t1": t1, "dt": dt, "p": P, "iterations": iterations, "learning_rate": lr,
               "objective": log["objective"], "peak": log["peak"], "designs": log["x"],
               "initial": J0, "final": J1, "verified_initial": V0, "verified_final": V1,
               "design_initial": design_initial, "design_final": design_final,
               "bounds": {n: [float(lo), float(hi)] for n, lo, hi in zip(NAMES, LOWER, UPPER)},
               "clearance": CLEARANCE, "bounds_ok": fin["feasible"], "assembles": fin["assembles"],
               "assembly_residual": fin["assembly_residual"], "max_violation": fin["max_violation"],
               "max_velocity_violation": fin["max_velocity_violation"], "run_ok": fin["ok"],
               "unique": fin["unique"] and verified["initial"]["unique"],
               "gradient": grad0.tolist(), "fd_gradient": fd.tolist(), "fd_rel_error": fd_rel_error,
               "gradient_final": grad1.tolist(),
               "verified": verified, "first_evaluation_seconds": first_seconds,
               "optimise_seconds": optimise_seconds, "seconds": seconds}

    if out is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        style = {"initial": dict(color="C0", ls="--",
                                 label=f"initial (a = {x0[0]:.2f} m, l = {x0[1]:.2f} m)"),
                 "final": dict(color="C3", ls="-",
                               label=f"final (a = {x_final[0]:.3f} m, l = {x_final[1]:.3f} m)")}

        # Objective and design variables over the iterations
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
        it = np.arange(iterations + 1)
        ax1.plot(it, log["objective"], "o-", color="C3", label=f"J = p-norm of |F_A|, p = {P}")
        ax1.plot(it, log["peak"], "s--", color="C7", ms=4, label="max |F_A| over the saved times")
        ax1.set_xlabel("iteration")
        ax1.set_ylabel("hitch force [N]")
        ax1.set_title("objective")
        ax1.legend(fontsize=8)
        xs = np.asarray(log["x"])
        for k, (n, c) in enumerate(zip(NAMES, ("C0", "C2"))):
            ax2.plot(it, xs[:, k], "o-", color=c, label=f"{n} ({'a' if k == 0 else 'l'})")
            ax2.axhline(LOWER[k], color=c, lw=0.8, ls=":")
            ax2.axhline(UPPER[k], color=c, lw=0.8, ls=":")
        ax2.plot(it, xs.sum(axis=1), "o-", color="C1", ms=3, label="a + l (>= 0.6)")
        ax2.set_xlabel("iteration")
        ax2.set_ylabel("[m]")
        ax2.set_title("design variables (dotted: bounds)")
        ax2.legend(fontsize=8)
        fig.tight_layout()
        save_figure(out, "design_mobile_robot_objective", fig)
        plt.close(fig)

        # Unique reactions over the manoeuvre, initial and final design
        fig, axes = plt.subplots(3, 1, sharex=True, figsize=(9, 8))
        for name, h_ in runs.items():
            axes[0].plot(h_["ts"], h_["A"], **style[name])
            axes[1].plot(h_["ts"], h_["W5"], **style[name])
            axes[2].plot(h_["ts"], h_["drive"], **style[name])
        axes[0].set_ylabel("|F_A|: hitch [N]")
        axes[1].set_ylabel("W5: trolley wheel\nside force [N]")
        axes[2].set_ylabel("drive: steering\nslider force [N]")
        axes[2].set_xlabel("t [s]")
        axes[0].set_title("unique reactions over the manoeuvre (adaptive Tsit5, rtol = atol = 1e-9)")
        for ax in axes:
            ax.legend(fontsize=8)
        fig.tight_layout()
        save_figure(out, "design_mobile_robot_reactions", fig)
        plt.close(fig)

        # Top view: paths, and the rig at a few instants
        fig, (ax, key) = plt.subplots(1, 2, figsize=(11, 7), width_ratios=(3, 1))
        corners = np.array([[0.5, 0.3], [-0.5, 0.3], [-0.5, -0.3], [0.5, -0.3], [0.5, 0.3]])
        snaps = [0.0, 3.0, 5.0] + ([8.0, 12.0] if not short else [])
        for name, h_ in runs.items():
            st = style[name]
            ax.plot(*h_["centre"].T, color=st["color"], lw=1.5, label=f"platform centre, {name}")
            ax.plot(*h_["wheel"].T, color=st["color"], lw=1, ls=":", label=f"trolley wheel W5, {name}")
            for t in snaps:
                i = int(np.argmin(np.abs(h_["ts"] - t)))
                c, s = np.cos(h_["angle"][i]), np.sin(h_["angle"][i])
                outline = h_["centre"][i] + corners @ np.array([[c, s], [-s, c]])
                ax.plot(*outline.T, color=st["color"], ls=st["ls"], lw=0.8)
                ax.plot(*np.stack([h_["hitch"][i], h_["wheel"][i]]).T, color=st["color"], ls=st["ls"],
                        lw=1.5, marker="o", ms=3)
        for name in runs:  # legend entries for the snapshots
            ax.plot([], [], color=style[name]["color"], ls=style[name]["ls"], lw=1.5, marker="o", ms=3,
                    label=f"platform outline, drawbar A-W5, {name}")
        ax.set_aspect("equal")
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.set_title(f"top view: the rig at t = {', '.join(f'{t:g}' for t in snaps)} s")
        key.axis("off")
        key.legend(*ax.get_legend_handles_labels(), fontsize=8, loc="upper left")
        fig.tight_layout()
        save_figure(out, "design_mobile_robot_paths", fig)
        plt.close(fig)
    write_outputs(out, "design_mobile_robot", [text, ""], results)
    return results


# %%
if __name__ == "__main__":
    run(main, __doc__)
