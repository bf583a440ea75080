"""Paper 002 and IFToMM A04: the parallelogram and the Bricard mechanism, one redundancy shared by a loop."""

import numpy as np

import jmbs

from .. import papers
from . import report
from .report import Figures, Section, changing, check, checks_table, ground_resultant


def _extremum(ts: np.ndarray, x: np.ndarray, sign: float) -> tuple[float, float]:
    """`(t, x)` of the saved sample maximising `sign * x`, refined by the parabola
    through it and its neighbours."""
    i = int(np.clip(np.argmax(sign * x), 1, len(x) - 2))
    a, b, c = x[i - 1:i + 2]
    d = 0.5 * (a - c) / (a - 2 * b + c)
    return float(ts[i] + d * (ts[1] - ts[0])), float(b - 0.25 * (a - c) * d)



def section(figs: Figures, short: bool) -> Section:
    sec = Section("Parallelogram and Bricard mechanism: one redundancy shared by a loop", ("002", "A04"),
                   "parallelogram (planar), Bricard (IFToMM A04)")
    par = jmbs.examples.parallelogram()
    rp = jmbs.solvability(par)
    bri = jmbs.examples.bricard()
    rb = jmbs.solvability(bri)
    ground = [j for j in bri.element_names if report.GROUND in bri.element(j).bodies]
    change, each = ground_resultant(rb, ground)

    t1 = 1.0 if short else 5.0
    ts = np.linspace(0.0, t1, int(round(25 * t1)) + 1)
    sol = jmbs.simulate(bri, t1, formulation=jmbs.NullSpaceProjection(), stabilization=jmbs.Projection(),
                        saveat=ts, throw=False)
    x = np.asarray(sol.reactions.point("J3"))[:, 0]
    violation = float(np.max(sol.violation))
    energy = np.asarray(sol.energy)
    drift = float(np.max(np.abs(energy - energy[0])) / np.abs(energy[0]))
    # Newton for the whole mechanism: the ground joints' resultant force on the rods
    # equals sum m (a - g); J1 acts on rod 1, J6 on the ground.
    f_ground = np.asarray(sol.reactions.force("J1") - sol.reactions.force("J6"))
    m = np.asarray(bri.mass)
    a = np.asarray(sol.v_dot).reshape(len(ts), bri.n_bodies, 6)[:, :, :3]
    newton = np.einsum("b,tbd->td", m, a - np.asarray(bri.gravity))
    newton_error = float(np.abs(f_ground - newton).max() / np.abs(newton).max())

    sec.text.append(
        "**Mechanisms**: `jmbs.examples.parallelogram` — three equal cranks pinned to the ground "
        "and to one coupler (a parallelogram with a third crank); `jmbs.examples.bricard` — "
        "IFToMM A04, five 1 m rods and six revolutes in one loop, J1 and J6 to the ground.\n\n"
        "**What is known**: both have one redundant constraint (the Bricard's Grübler count is 0, "
        "its real mobility 1). The redundancy is a self-stress that runs through every joint of "
        "the loop, so no joint reaction is unique; in the parallelogram the self-stress acts "
        "along the cranks (axial forces t = (1, −2, 1)), so with vertical cranks the x components "
        "are unique. Paper 002 and IFToMM A04: released at rest under gravity, the Bricard "
        "moves (joint J3 from x = +1 to x = −1 at t ≈ 2.5 s and back at t ≈ 5 s) with energy "
        "conserved; projection keeps the constraint violation at rounding level.")

    unique_p = [el for el in par.element_names if rp.is_unique(el)]
    comps_p = {el: rp.component_verdicts(el) for el in par.element_names}
    unique_b = [el for el in bri.element_names if rb.is_unique(el)]
    structure = sec.add(
        check("parallelogram: redundancy p", papers.PARALLELOGRAM["redundancy"], rp.redundancy),
        check("parallelogram: joints with a unique reaction", list(papers.PARALLELOGRAM["unique"]),
               unique_p),
        check("parallelogram, vertical cranks: components", dict.fromkeys(par.element_names, "Fx:U Fy:N"),
               comps_p),
        check("Bricard: Grübler count nv − nc, p, dof",
               {k: papers.BRICARD[k] for k in ("grubler", "redundancy", "dof")},
               {"grubler": bri.nv - bri.nc, "redundancy": rb.redundancy, "dof": rb.dof}),
        check("Bricard: joints with a unique reaction", list(papers.BRICARD["unique"]), unique_b),
        check("Bricard: resultant of J1, J6 on the ground (rep.is_unique_resultant), criterion",
              "< 1e-12", change, change < 1e-12))

    dynamics = sec.add(
        check("simulation result", "success", sol.message),
        check("max constraint violation |Φ|", "< 1e-10", violation, violation < 1e-10),
        check("relative energy error", "< 1e-6", drift, drift < 1e-6),
        check("saved states where any joint's reaction is flagged unique", 0,
               int(np.asarray(sol.reactions.unique).any(axis=1).sum())),
        check("ground resultant force vs Σ m (a − g), relative", "< 1e-8", newton_error,
               newton_error < 1e-8))
    swing = papers.BRICARD_SWING
    if not short:
        t_min, x_min = _extremum(ts, x, -1.0)
        x_end = float(x[-1])
        dynamics += sec.add(
            check("J3: time of x = −1 [s]", f"{swing['t_min']} ± 0.05", t_min,
                   abs(t_min - swing["t_min"]) < 0.05),
            check("J3: minimum x [m]", f"{swing['x_min']} ± 1e-3", x_min,
                   abs(x_min - swing["x_min"]) < 1e-3),
            check(f"J3: x at t = {swing['t_return']:g} s [m]", f"{swing['x_return']} ± 1e-2", x_end,
                   abs(x_end - swing["x_return"]) < 1e-2))

    sec.text += [
        f"**jmbs** (`jmbs.solvability`): parallelogram rank {rp.rank} of {par.nc}, Bricard rank "
        f"{rb.rank} of {bri.nc} (rank margin {rb.rank_margin:.1f} digits).",
        checks_table(structure),
        f"The Bricard's ground joints' wrenches on the ground are not unique one by one (criterion "
        f"in brackets: {changing(each)}), their resultant is "
        "(`rep.is_unique_resultant([\"J1\", \"J6\"], \"ground\")`, "
        "`Reactions.resultant(model, [\"J1\", \"J6\"], \"ground\")` for its value).",
        f"**Bricard simulation**, {t1:g} s (`jmbs.simulate`, `NullSpaceProjection()` + "
        f"`Projection()`, Tsit5, rtol = atol = 1e-8; {int(sol.stats['num_accepted_steps'])} steps). "
        "The reactions of J1 and J6 are the formulation's choice (minimum norm) and flagged "
        "non-unique at every state; their resultant obeys Newton's law for the whole mechanism:",
        checks_table(dynamics)]

    fig = figs.plt.figure(figsize=(14, 5))
    fig.subplots_adjust(wspace=0.45)
    jmbs.plotting.plot_mechanism(par, report=rp, ax=fig.add_subplot(1, 2, 1), title="parallelogram")
    jmbs.plotting.plot_mechanism(bri, report=rb, ax=fig.add_subplot(1, 2, 2, projection="3d"),
                                 title="Bricard")
    sec.text.append(figs.save(fig, "loops", "Parallelogram with a third crank and Bricard mechanism: "
                                            "no joint reaction is unique."))
    fig, axes = figs.plt.subplots(3, 1, sharex=True, figsize=(8, 8))
    axes[0].plot(ts, x, "k-")
    if not short:
        axes[0].plot([swing["t_min"], swing["t_return"]], [swing["x_min"], swing["x_return"]], "o",
                     mfc="none", color="C3", ms=10, label="IFToMM A04")
        axes[0].legend()
    axes[0].set_ylabel("x of joint J3 [m]")
    axes[1].semilogy(ts, np.maximum(np.asarray(sol.violation), 1e-17), label="max |Φ| [m]")
    axes[1].semilogy(ts, np.maximum(np.abs(energy - energy[0]) / abs(energy[0]), 1e-17),
                     label="|E − E0| / |E0|")
    axes[1].legend()
    for k, axis in enumerate("xyz"):
        axes[2].plot(ts, f_ground[:, k], f"C{k}-", label=f"{axis}: J1 + J6 from the reactions")
        axes[2].plot(ts, newton[:, k], f"C{k}o", ms=3, mfc="none", label=f"{axis}: Σ m (a − g)")
    axes[2].set_ylabel("ground resultant force [N]")
    axes[2].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axes[2].set_xlabel("t [s]")
    fig.suptitle("Bricard released at rest (NullSpaceProjection + Projection)")
    sec.text.append(figs.save(fig, "bricard_run", "Bricard run: the tracked joint, the constraint violation "
                                                  "and energy error, and the unique ground resultant."))
    fig = jmbs.plotting.plot_reactions(sol, names=["J1", "J6"])
    sec.text.append(figs.save(fig, "bricard_reactions", "Reaction forces of the ground joints J1 and J6: "
                                                        "not unique (dashed), the null-space projection's "
                                                        "minimum-norm choice."))
    if not short:
        gif = jmbs.plotting.animate(bri, sol, figs.folder / "bricard.gif", fps=12, every=2)
        sec.text.append(f"![Bricard motion](figures/{gif.name})\n\n*The Bricard's motion, {t1:g} s "
                        "(jmbs.plotting.animate).*")
    sec.results = {
        "parallelogram": {"rank": rp.rank, "redundancy": rp.redundancy, "unique": unique_p,
                          "components": comps_p},
        "bricard": {"rank": rb.rank, "redundancy": rb.redundancy, "dof": rb.dof, "unique": unique_b,
                    "ground_resultant_change": change, "ground_joint_change": each},
        "simulation": {"t1": t1, "steps": int(sol.stats["num_accepted_steps"]), "max_violation": violation,
                       "relative_energy_error": drift, "newton_relative_error": newton_error,
                       "x_J3": x.tolist(), "ts": ts.tolist()}}
    return sec
