# %% [markdown]
# # Andrews' squeezing mechanism: which formulation and solver reach the reference
#
# Hairer & Wanner's test problem built from jmbs's elements
# (`jmbs.examples.andrews_squeezer()`: 7 bodies, 10 revolute joints, a spring-damper,
# a torque) and simulated to t = 0.03 s with several formulation, stabilization and
# solver settings. Each is compared with the test set's reference solution (PSIDE,
# 1e-14) in its seven angles: the bar is 8 significant digits in the angles and 6 in the
# rates. The reference's own accuracy limits the errors to about 3e-10 and 5e-8
# (`benchmarks/bench_andrews.py` reaches the same floor with SciPy in the test set's
# minimal coordinates).
#
# Run: `.venv/bin/python experiments/andrews_squeezer.py [--short] [--out DIR]`

# %%
import sys
import time
from pathlib import Path

import diffrax
import numpy as np

import jmbs
from jmbs.examples.andrews import andrews_squeezer, minimal_angles
from jmbs.reproduce import papers

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import format_table, run, save_figure, write_outputs  # noqa: E402


def settings(short: bool):
    """`(label, simulate keyword arguments)` to compare (short: the first two, which share
    one compiled program: tolerances are array leaves)."""
    def pid(tol):
        return diffrax.PIDController(rtol=tol, atol=tol)

    tsit5, dopri8, kvaerno5 = diffrax.Tsit5(), diffrax.Dopri8(), diffrax.Kvaerno5()
    out = [
        ("NullSpace + Projection, Tsit5, 1e-8", dict(solver=tsit5, stepsize_controller=pid(1e-8))),
        ("NullSpace + Projection, Tsit5, 1e-10", dict(solver=tsit5, stepsize_controller=pid(1e-10))),
        ("Elimination + Projection, Tsit5, 1e-10",
         dict(formulation=jmbs.Elimination(), solver=tsit5, stepsize_controller=pid(1e-10))),
        ("NullSpace + Baumgarte(10, 10), Tsit5, 1e-10",
         dict(stabilization=jmbs.Baumgarte(10.0, 10.0), solver=tsit5, stepsize_controller=pid(1e-10))),
        ("NullSpace + Projection, Dopri8, 1e-11", dict(solver=dopri8, stepsize_controller=pid(1e-11))),
        ("NullSpace + Projection, Kvaerno5, 1e-10", dict(solver=kvaerno5, stepsize_controller=pid(1e-10))),
    ]
    return out[:2] if short else out


def main(short: bool = False, out: Path | None = None) -> dict:
    model = andrews_squeezer()
    T = papers.ANDREWS_T_END
    ref_a, ref_r = np.asarray(papers.ANDREWS_ANGLES), np.asarray(papers.ANDREWS_RATES)
    bar = tuple(0.5 * 10.0 ** (1 - d) for d in papers.ANDREWS_DIGITS)
    rows, results, best = [], {}, None
    for label, kw in settings(short):
        start = time.perf_counter()
        sol = jmbs.simulate(model, T, saveat=np.linspace(0.0, T, 201), reactions=False,
                            max_steps=200_000, **kw)
        seconds = time.perf_counter() - start
        a, r = minimal_angles(model, sol.q[-1], sol.v[-1])
        ea = float(np.max(np.abs(a - ref_a) / np.abs(ref_a)))
        er = float(np.max(np.abs(r - ref_r) / np.abs(ref_r)))
        ok = ea < bar[0] and er < bar[1]
        steps = int(sol.stats["num_steps"])
        rows.append([label, f"{ea:.1e}", f"{er:.1e}", steps, f"{seconds:.1f}", "yes" if ok else "no"])
        results[label] = {"angles": ea, "rates": er, "steps": steps, "seconds": seconds, "ok": ok}
        if best is None:
            best = sol
    text = format_table(["setting", "angles", "rates", "steps", "first call [s]", "8/6 digits"], rows)
    print(f"Andrews' squeezer to t = {T} s against the test set's reference (relative errors)\n{text}")
    write_outputs(out, "andrews_squeezer", [text], results)
    if out is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        history = np.array([minimal_angles(model, q, v)[0] for q, v in zip(best.q, best.v)])
        fig, ax = plt.subplots(figsize=(7, 4))
        for k, n in enumerate(("beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon")):
            ax.plot(np.asarray(best.ts) * 1e3, history[:, k], label=n)
        ax.plot([T * 1e3] * 7, ref_a, "k+", ms=10, label="reference")
        ax.set_xlabel("t [ms]")
        ax.set_ylabel("angle [rad]")
        ax.legend(ncol=2, fontsize=8)
        fig.tight_layout()
        save_figure(out, "andrews_squeezer", fig)
    return results


# %%
if __name__ == "__main__":
    run(main, __doc__)
