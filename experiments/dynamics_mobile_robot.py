# %% [markdown]
# # Mobile robot with a trolley: same motion, different reactions (Wojtyra & Frączek, §4.3-4.4)
#
# The robot of `jmbs.examples.mobile_robot` (redundancy p = 2) rolls at 1 m/s
# through the paper's steering manoeuvre (`examples.steering_manoeuvre`: turn
# right, straight, turn left). The paper integrates it with three choices of
# eliminated constraints, rows 6 and 21 (C's y component and W4), 18 and 21 (W1,
# W4), 19 and 21 (W2, W4), and finds the same motion, the same reactions in A, D,
# E, F, G, H, the driver and W5, and different ones in B, C and W1-W4. jmbs runs
# the three `Elimination` variants plus `NullSpaceProjection` and `Pseudoinverse`
# (both give the minimum-norm multipliers), all with Tsit5, rtol = atol = 1e-10 (steps
# of at most 0.1 s: see the note at the controller) and
# `Projection`, and compares:
#
# - the motion: max |q - q_ref| over the run (reference: null-space projection);
# - each element's reaction (its force and torque on body j) between all pairs of
#   runs, relative to the element's largest reaction, next to jmbs's uniqueness flag;
# - Fig. 3 (trajectories of the platform centre and the knife-edge contact points)
#   and Fig. 4 (B x, y and W3 normal: differ; D x, y and W5: same).
#
# Run: `.venv/bin/python experiments/dynamics_mobile_robot.py [--short] [--out DIR]`

# %%
import itertools
import sys
import time
from pathlib import Path

import diffrax
import jax
import numpy as np

import jmbs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import format_table, run, save_figure, verdict, write_outputs  # noqa: E402

VARIANTS = {  # the paper's numbering of the eliminated rows (1-based)
    "elim C.Fy, W4 (6, 21)": [("C", "Fy"), ("W4", "Fn")],
    "elim W1, W4 (18, 21)": [("W1", "Fn"), ("W4", "Fn")],
    "elim W2, W4 (19, 21)": [("W2", "Fn"), ("W4", "Fn")],
}
PAPER_UNIQUE = {**{k: True for k in ("A", "D", "E", "F", "G", "H", "drive", "W5")},
                **{k: False for k in ("B", "C", "W1", "W2", "W3", "W4")}}
SAME_TOL = 1e-6  # relative difference below which two runs' reactions count as the same


def wrench(sol, name):
    """`(T, k)`: the element's force and torque on body j along the run."""
    r = sol.reactions
    f, m = np.asarray(r.force(name)), np.asarray(r.torque(name))
    return np.concatenate([f, m.reshape(len(f), -1)], axis=1)


def kept_rows_condition(model, sol, eliminate):
    """`(min, t_min)` over the saved states of `sigma_min / sigma_max` of the rows of `C`
    kept by an elimination (all rows, of rank r, for the other formulations)."""
    ok = valid(sol)
    qs, ts = np.asarray(sol.q)[ok], np.asarray(sol.ts)[ok]
    Cs = np.asarray(jax.jit(jax.vmap(lambda q, t: jmbs.constraint_matrix(model, q, t)))(qs, ts))
    drop = {model.element(e).rows[0] + model.element(e).components.index(c) for e, c in eliminate}
    keep = [i for i in range(model.nc) if i not in drop]
    s = np.linalg.svd(Cs[:, keep], compute_uv=False)
    r = len(keep) if eliminate else int(np.sum(s[0] > 1e-8 * s[0, 0]))
    ratio = s[:, r - 1] / s[:, 0]
    k = int(np.argmin(ratio))
    return float(ratio[k]), float(ts[k])


def valid(sol) -> np.ndarray:
    """`(T,)` saved states that were reached (a run that stopped early leaves inf after)."""
    return np.all(np.isfinite(np.asarray(sol.q)), axis=1)


def main(short: bool = False, out: Path | None = None) -> dict:
    t1 = 5.0 if short else 12.0
    ts = np.linspace(0.0, t1, int(round(20 * t1)) + 1)
    model = jmbs.examples.mobile_robot()
    formulations = {"null-space projection": jmbs.NullSpaceProjection(),
                    "pseudoinverse": jmbs.Pseudoinverse(),
                    **{k: jmbs.Elimination(v) for k, v in VARIANTS.items()}}
    # dtmax: the first second is an exact straight run (zero error estimate), so an
    # uncapped controller grows the step past the start of the turn, whose stages then
    # all see a constant steering angle: a wrong trajectory, accepted at any tolerance.
    controller = diffrax.PIDController(rtol=1e-10, atol=1e-10, dtmax=0.1)
    sols, info = {}, {}
    for name, form in formulations.items():
        start = time.perf_counter()
        sol = jmbs.simulate(model, t1, formulation=form, saveat=ts, stepsize_controller=controller,
                            throw=False)
        sols[name] = sol
        ok = valid(sol)
        info[name] = {"result": sol.message, "steps": int(sol.stats["num_accepted_steps"]),
                      "max_violation": float(np.max(np.asarray(sol.violation)[ok])),
                      "max_velocity_violation": float(np.max(np.asarray(sol.velocity_violation)[ok])),
                      "seconds": round(time.perf_counter() - start, 1)}
        cond, t_cond = kept_rows_condition(model, sol, VARIANTS.get(name, []))
        info[name] |= {"min_kept_sigma_ratio": cond, "t_min_kept_sigma_ratio": t_cond,
                       "reached_t": float(np.asarray(sol.ts)[ok][-1])}
    ref = sols["null-space projection"]
    names = list(sols)
    failed = [n for n in names if info[n]["result"] != "success"]

    # (i) the motion
    ok = {n: valid(s) for n, s in sols.items()}

    def common(a, b):  # saved times both runs reached
        return ok[a] & ok[b]

    motion = {n: float(np.max(np.abs(np.asarray(s.q) - np.asarray(ref.q))[common(n, names[0])]))
              for n, s in sols.items()}
    lines = [f"Mobile robot with trolley (paper 000, §4.3-4.4): steering manoeuvre, 1 m/s, {t1:g} s, "
             "Tsit5, rtol = atol = 1e-10, Projection", "",
             format_table(["formulation", "result", "steps", "max |Phi|", "max |C v + b|",
                           "max |q - q_ref|", "min s_r/s_1 kept rows (t)", "wall s"],
                          [[n, "success" if i["result"] == "success" else
                            f"FAILED: stopped, t <= {i['reached_t']:g} s" +
                            (" (integrator)" if "integrator" in i["result"] else ""), i["steps"],
                            f"{i['max_violation']:.1e}",
                            f"{i['max_velocity_violation']:.1e}", f"{motion[n]:.1e}",
                            f"{i['min_kept_sigma_ratio']:.1e} ({i['t_min_kept_sigma_ratio']:.2f})",
                            f"{i['seconds']:.0f}"] for n, i in info.items()]),
             "(s_r/s_1: smallest over largest of the r = rank(C) singular values of the rows of C a "
             "formulation keeps, over the saved states; an elimination is singular where it reaches 0)",
             *([f"{n}: {info[n]['result']}" for n in failed]), ""]

    # (ii) the reactions: max over pairs of runs of max_t |w_a - w_b| / max_t |w_ref|
    rows, reactions = [], {}
    elim = [n for n in names if n.startswith("elim")]
    for el in model.element_names:
        w = {n: wrench(s, el) for n, s in sols.items()}
        scale = max(float(np.max(np.abs(x[ok[n]]))) for n, x in w.items())

        def diff(pairs):
            return max(float(np.max(np.abs(w[a] - w[b])[common(a, b)])) for a, b in pairs)

        diff_all = diff(itertools.combinations(names, 2))
        diff_elim = diff(itertools.combinations(elim, 2))
        flags = {n: bool(np.all(np.asarray(s.reactions.is_unique(el))[ok[n]])) for n, s in sols.items()}
        unique = flags["null-space projection"]
        rel_all, rel_elim = diff_all / scale, diff_elim / scale
        same = rel_all <= SAME_TOL
        reactions[el] = {"unique": unique, "flags_agree": len(set(flags.values())) == 1,
                         "paper_unique": PAPER_UNIQUE[el], "max_reaction": scale,
                         "rel_diff_all": rel_all, "rel_diff_elimination": rel_elim, "same": same}
        rows.append([el, model.element(el).kind, verdict(PAPER_UNIQUE[el]), verdict(unique),
                     "yes" if reactions[el]["flags_agree"] else "NO", f"{scale:.3g}",
                     f"{rel_elim:.1e}", f"{rel_all:.1e}", "same" if same else "differ",
                     "yes" if same == unique == PAPER_UNIQUE[el] else "NO"])
    lines += ["Reactions (force and torque on body j): max over pairs of runs and over time of the "
              "difference, relative to the element's largest reaction",
              format_table(["element", "type", "paper", "jmbs", "flags agree", "max |reaction|",
                            "3 eliminations", "all 5 runs", f"(tol {SAME_TOL:g})", "consistent"], rows)]
    consistent = all(r["same"] == r["unique"] == r["paper_unique"] for r in reactions.values())
    max_motion = max(motion.values())
    lines += ["", f"same motion in all five runs (over the saved times each reached): max |q - q_ref| = "
              f"{max_motion:.1e}; reactions same "
              f"exactly where unique (and as the paper finds): {'yes' if consistent else 'NO'}"]
    text = "\n".join(lines)
    print(text)

    results = {"t1": t1, "runs": info, "failed": failed, "max_q_difference": motion,
               "max_motion_difference": max_motion,
               "reactions": reactions, "consistent": consistent}

    if out is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        # Fig. 3: trajectories of selected points
        fig, ax = plt.subplots(figsize=(8, 6))
        q = np.asarray(ref.q)
        ax.plot(q[:, 0], q[:, 1], "k-", lw=2, label="platform centre of mass")
        for k, el in enumerate(("W1", "W2", "W3", "W4", "W5")):
            p = np.asarray(ref.reactions.point(el))
            ax.plot(p[:, 0], p[:, 1], f"C{k}-", lw=1, label=f"{el} contact point")
        ax.set_aspect("equal")
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.legend(fontsize=8)
        ax.set_title("Mobile robot: trajectories (paper 000, Fig. 3)")
        fig.tight_layout()
        save_figure(out, "dynamics_mobile_robot_trajectories", fig)
        plt.close(fig)

        # Fig. 4: non-unique (left) and unique (right) reactions
        fig, axes = plt.subplots(3, 2, sharex=True, figsize=(11, 9))
        t = np.asarray(ref.ts)
        panels = [(0, 0, "B", "force", 0, "B: Fx [N]"), (1, 0, "B", "force", 1, "B: Fy [N]"),
                  (2, 0, "W3", "components", 0, "W3: normal force [N]"),
                  (0, 1, "D", "force", 0, "D: Fx [N]"), (1, 1, "D", "force", 1, "D: Fy [N]"),
                  (2, 1, "W5", "components", 0, "W5: normal force [N]")]
        for i, j, el, what, c, label in panels:
            ax = axes[i, j]
            for k, (n, s) in enumerate(sols.items()):
                y = np.where(ok[n], np.asarray(getattr(s.reactions, what)(el))[:, c], np.nan)
                unique = bool(np.all(np.asarray(s.reactions.is_unique(el))[ok[n]]))
                ax.plot(t, y, f"C{k}", ls="-" if unique else "--", lw=2.5 if unique and k == 0 else 1.2,
                        alpha=0.6 if unique and k == 0 else 1.0,
                        label=n + ("" if unique else " (not unique)"))
            ax.set_ylabel(label)
            ax.legend(fontsize=6)
        axes[0, 0].set_title("not unique: depend on the formulation")
        axes[0, 1].set_title("unique: the same in every run")
        for ax in axes[-1]:
            ax.set_xlabel("t [s]")
        fig.tight_layout()
        save_figure(out, "dynamics_mobile_robot_reactions", fig)
        plt.close(fig)
    write_outputs(out, "dynamics_mobile_robot", [text, ""], results)
    return results


# %%
if __name__ == "__main__":
    run(main, __doc__)
