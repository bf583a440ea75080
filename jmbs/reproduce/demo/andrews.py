"""Andrews' squeezing mechanism (Hairer & Wanner's test problem) from jmbs's elements."""

import time

import numpy as np

import jmbs
import jmbs.plotting
from jmbs.examples.andrews import andrews_squeezer, minimal_angles, recommended_run

from .. import papers
from .report import Figures, Section, check, checks_table, table


def section(figs: Figures, short: bool) -> Section:
    sec = Section("Andrews' squeezing mechanism: the test set's reference solution", ("HW",),
                  "Andrews' squeezer (planar, 7 bodies, spring and driving torque)")
    model = andrews_squeezer()
    T = papers.ANDREWS_T_END
    run = recommended_run()
    start = time.perf_counter()
    sol = jmbs.simulate(model, T, saveat=np.linspace(0.0, T, 61 if short else 301), **run)
    seconds = time.perf_counter() - start
    angles, rates = minimal_angles(model, sol.q[-1], sol.v[-1])
    ref_a, ref_r = np.asarray(papers.ANDREWS_ANGLES), np.asarray(papers.ANDREWS_RATES)
    digits_a, digits_r = papers.ANDREWS_DIGITS
    # k significant digits: the error is below half a unit in the k-th digit.
    err_a = np.abs(angles - ref_a) / np.abs(ref_a)
    err_r = np.abs(rates - ref_r) / np.abs(ref_r)
    names = ("β", "Θ", "γ", "Φ", "δ", "Ω", "ε")
    sec.text.append(
        "**Mechanism** (`jmbs.examples.andrews_squeezer()`): the seven bodies of Hairer & "
        "Wanner's squeezer in absolute coordinates, ten revolute joints, the spring (c0 = "
        "4530 N/m, l0 = 0.07785 m) as `add_spring_damper` and the driving torque mom = "
        "0.033 N m on the crank as `add_torque`; the geometry, masses and inertias are "
        "derived from the test set's minimal-coordinate equations. **Reference**: the test "
        "set's solution at t = 0.03 s (PSIDE, rtol = atol = 1e-14) in its seven relative "
        "angles, which jmbs recovers from the bodies' angles. **Run**: "
        f"{run['formulation'].__class__.__name__}, {type(run['solver']).__name__}, "
        f"{run['stepsize_controller'].rtol:g} relative tolerance: {seconds:.1f} s "
        f"(compilation included), {int(sol.stats['num_steps'])} steps.")
    rows = [[n, f"{a:.12g}", f"{r:.12g}", f"{e:.1e}", f"{x:.12g}", f"{y:.12g}", f"{f:.1e}"]
            for n, a, r, e, x, y, f in zip(names, angles, ref_a, err_a, rates, ref_r, err_r)]
    sec.text.append(table(["angle", "jmbs [rad]", "reference", "rel. error", "rate jmbs [rad/s]",
                           "reference", "rel. error"], rows))
    sec.text.append(checks_table(sec.add(
        check(f"angles at t = {T:g} s to {digits_a} significant digits",
              f"rel. error < {0.5 * 10.0 ** (1 - digits_a):g}", f"{err_a.max():.2g}",
              err_a.max() < 0.5 * 10.0 ** (1 - digits_a)),
        check(f"angular velocities to {digits_r} significant digits",
              f"rel. error < {0.5 * 10.0 ** (1 - digits_r):g}", f"{err_r.max():.2g}",
              err_r.max() < 0.5 * 10.0 ** (1 - digits_r)),
        check("max |Φ| over the run", "< 1e-10", f"{float(np.max(sol.violation)):.2g}",
              float(np.max(sol.violation)) < 1e-10))))

    history = np.array([minimal_angles(model, q, v)[0] for q, v in zip(sol.q, sol.v)])
    fig, ax = figs.plt.subplots(1, 2, figsize=(11, 4))
    jmbs.plotting.plot_mechanism(model, q=sol.q[-1], ax=ax[0], title=f"t = {T:g} s")
    for k, n in enumerate(names):
        ax[1].plot(np.asarray(sol.ts) * 1e3, history[:, k], label=n)
    ax[1].plot([T * 1e3] * 7, ref_a, "k+", ms=10, label="reference")
    ax[1].set_xlabel("t [ms]")
    ax[1].set_ylabel("angle [rad]")
    ax[1].legend(ncol=2, fontsize=8)
    sec.text.append(figs.save(fig, "andrews", "Andrews' squeezer: the mechanism at t = 0.03 s "
                                              "and the seven angles, with the reference at the end."))
    sec.results = {"angles": angles.tolist(), "rates": rates.tolist(),
                   "max_rel_error_angles": float(err_a.max()),
                   "max_rel_error_rates": float(err_r.max()), "seconds": seconds,
                   "steps": int(sol.stats["num_steps"])}
    return sec
