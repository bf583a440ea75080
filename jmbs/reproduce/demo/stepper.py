"""Paper 002: the Bricard with the fixed-step regularized stepper (rigid, compliant, projected)."""


from .. import paper002
from .report import Figures, Section, check, checks_table, table


def section(figs: Figures, short: bool) -> Section:
    sec = Section("Bricard mechanism with paper 002's fixed-step stepper", ("002", "A04"),
                  "Bricard (IFToMM A04)")
    t1 = 2.6 if short else paper002.T_END
    runs = paper002.run(t1)
    rigid, compliant, projected = (runs[k] for k in ("rigid joints", "angular compliance",
                                                     "rigid + projection"))
    lock = rigid["lock"]
    sec.text.append(
        "**Mechanism**: `jmbs.examples.bricard()`, five 1 m, 1 kg rods, six revolutes, one "
        "redundant constraint; released at rest under gravity. **Stepper**: "
        f"`jmbs.RegularizedEuler(h={paper002.STEP:g})` (paper 002, eq. 1), run by "
        f"`jmbs.simulate(model, {t1:g}, solver=...)`: rigid joints (the step's rank decided at "
        "every step, as a generic solver does), angular compliance "
        f"{paper002.ANGULAR_COMPLIANCE:g} rad/(N m) on the moment rows Mx, My of every joint, "
        "and rigid joints with positions and velocities projected after each step "
        "(`projection=True`, eqs. 2-3). **Paper**: the rigid joints make the step's "
        "equations incompatible once the violation (below 1e-4) separates the redundant row; "
        "compliance restores the motion between x = 1 and x = −1 with a slightly larger "
        "violation; projection keeps it at machine precision.")
    rows = [[name, f"{r['x_min']:.4f}", f"{r['max_violation']:.1e}",
             "-" if r["lock"] is None else f"t = {r['lock']['t']:.2f} s, x = {r['lock']['x']:.3f} m",
             f"{sorted(set(r['step_rank'].tolist()))}",
             f"{r['unique'].all(axis=1).mean():.0%}"] for name, r in runs.items()]
    sec.text.append(table(["run", "min x of J3 [m]", "max \\|Φ\\|", "step sees every row independent",
                           "step ranks", "states with every reaction unique"], rows))
    sec.text.append(checks_table(sec.add(
        check("rigid: the step's rank at the start", 29, int(rigid["step_rank"][0])),
        check("rigid: locks (the step sees 30 independent rows) within", "0.5 s < t < 1.5 s",
              None if lock is None else lock["t"], lock is not None and 0.5 < lock["t"] < 1.5),
        check("rigid: violation where it locks", "1e-5 .. 1e-3",
              None if lock is None else lock["violation"],
              lock is not None and 1e-5 < lock["violation"] < 1e-3),
        check("rigid: stops short of x = −1 (min x)", "> −0.5", rigid["x_min"], rigid["x_min"] > -0.5),
        check("angular compliance: reaches x = −1 (min x)", "< −0.99", compliant["x_min"],
              compliant["x_min"] < -0.99),
        check("angular compliance: max |Φ|", "< 1e-3", compliant["max_violation"],
              compliant["max_violation"] < 1e-3),
        check("angular compliance: every reaction unique", True, bool(compliant["unique"].all())),
        check("projection: reaches x = −1 (min x)", "< −0.98", projected["x_min"],
              projected["x_min"] < -0.98),
        check("projection: max |Φ|", "< 1e-14", projected["max_violation"],
              projected["max_violation"] < 1e-14))))
    if lock is not None:
        sec.text.append(
            f"**Where and why the rigid joints lock**: at t = {lock['t']:.2f} s (x = "
            f"{lock['x']:.3f} m) the violation has grown to {lock['violation']:.1e}; the redundant "
            "row's singular value in the step's matrix `C M^-1 C^T` then exceeds the rank "
            "tolerance, the step counts 30 independent rows for 30 velocities, and the only "
            "velocity it admits is the correction of `Φ`: the step takes the kinetic energy out "
            "and the mechanism swings about x ≈ 0 within a fraction of its range. The uniqueness "
            "analysis, run at the same violated configurations, agrees: there it finds no "
            "redundancy either, so it flags the locked structure's reactions unique.")
    fig = paper002.plot(runs)
    sec.text.append(figs.save(fig, "stepper_bricard", "Paper 002's Fig. 2 with jmbs.RegularizedEuler: x "
                                                      "of J3 (P2) and the constraint violation."))
    sec.results = {name: {"x_min": r["x_min"], "max_violation": r["max_violation"], "lock": r["lock"]}
                   for name, r in runs.items()}
    return sec
