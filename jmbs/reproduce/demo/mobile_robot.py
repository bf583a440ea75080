"""Paper 000, §4: the mobile robot with a trolley (ranks, verdicts, a steering sweep)."""

import dataclasses
import math

import jax
import numpy as np

import jmbs
from jmbs.examples.mobile_robot import slider_displacement

from ..._linalg import numerical_rank
from .. import papers
from .report import Figures, Section, check, checks_table, mark, table


def _slide(t):
    """Driver motion `f(t) = t`: the time is the slide of the robot's steering slider."""
    return t


def section(figs: Figures, short: bool) -> Section:
    sec = Section("Mobile robot with a trolley", ("000",), "mobile robot with trolley (planar, 7 bodies)")
    model = jmbs.examples.mobile_robot(motion=_slide)
    rep = jmbs.solvability(model)

    def path(delta_deg: float):
        """The configuration with wheel W1 steered by `delta_deg`, and its time (the slide)."""
        d = float(slider_displacement(math.radians(delta_deg)))
        return jmbs.examples.mobile_robot_configuration(d), d

    turn = 30.0
    rep_turn = jmbs.solvability(model, *path(turn))
    angles = np.linspace(-80.0, 80.0, 9 if short else 33)  # the dead centres are at +-90 deg
    sweep = jmbs.solvability_path(model, path, angles, progress=False)
    qs = np.stack([np.asarray(model.q0)] + [path(a)[0] for a in angles])
    ts = np.array([0.0] + [path(a)[1] for a in angles])
    Cs = np.asarray(jax.jit(jax.vmap(lambda q, t: jmbs.constraint_matrix(model, q, t)))(qs, ts))
    hol = model.holonomic_rows
    ranks = {"rank(Phi_q)": [numerical_rank(C[hol]) for C in Cs],
             "rank(Psi)": [numerical_rank(C[~hol]) for C in Cs], "r": [numerical_rank(C) for C in Cs]}
    ranks["p"] = [model.nc - r for r in ranks["r"]]

    sec.text.append(
        "**Mechanism** (`jmbs.examples.mobile_robot`): platform 1, steering linkage 2–6 driven "
        "in the translational joint H, trolley 7 hitched by revolute A; revolutes A–G, "
        "knife edges W1 (front wheel), W2 (back wheel), W3 and W4 (one axle on the platform), W5 "
        "(trolley): 21 velocity coordinates, 17 holonomic and 5 nonholonomic (Pfaffian) rows. "
        "The paper's dimensions are lost; jmbs's linkage has the paper's structure (W1 and W2 "
        "steered mirror-symmetrically about the W3/W4 axle).\n\n"
        "**The paper** (§4): in every nonsingular configuration rank(Φ_q) = 17, rank(Ψ) = 4, "
        "r = 20, p = 2; the reactions of A, D, E, F, G, H, the driver and W5 are unique, those of "
        "B, C and W1–W4 are not. Its dynamic simulations eliminate the constraint pairs "
        "{C_y, W4}, {W1, W4} and {W2, W4}, so each pair is redundant; its Fig. 4 shows the x and "
        "y components of B changing with that choice during the turns.")

    paper_ranks = papers.MOBILE_ROBOT_RANKS
    rank_checks = sec.add(*(check(f"{k} at the reference", v, ranks[k][0]) for k, v in paper_ranks.items()))
    rows = []
    for el, paper in papers.MOBILE_ROBOT.items():
        (c,) = sec.add(check(f"reaction of {el}", paper, rep.verdict(el)))
        info = model.element(el)
        rows.append([el, info.kind, "–".join(info.bodies), paper, c.obtained, rep.component_verdicts(el),
                     rep_turn.component_verdicts(el), f"{min(rep.margin(el), 99):.1f}", mark(c.passed)])

    names = jmbs.component_names(model)

    def verdicts(r, rows: list[str]) -> dict[str, str]:
        return {n: papers.verdict(r.decisions.component_unique[names.index(n)]) for n in rows}

    eliminated = [check(f"rank without {' and '.join(f'{el}.{c}' for el, c in pair)}", paper_ranks["r"],
                        numerical_rank(np.delete(Cs[0], [names.index(f"{el}.{c}") for el, c in pair],
                                                 axis=0)))
                  for pair in papers.MOBILE_ROBOT_ELIMINATIONS]
    dropped = sorted({f"{el}.{c}" for pair in papers.MOBILE_ROBOT_ELIMINATIONS for el, c in pair})
    eliminated += [check("eliminated components unique?", dict.fromkeys(dropped, "N"),
                          verdicts(rep, dropped)),
                   check(f"components of B steered by {turn:g}° (Fig. 4)", {"B.Fx": "N", "B.Fy": "N"},
                          verdicts(rep_turn, ["B.Fx", "B.Fy"]))]
    sec.add(*eliminated)

    cols = [model.element_names.index(el) for el in papers.MOBILE_ROBOT]
    want = np.array([v == "U" for v in papers.MOBILE_ROBOT.values()])
    n_pattern = int((sweep.sweep.unique[:, cols] == want).all(axis=1).sum())
    # Events where only single components change are reported below, not counted.
    changes = [e for e in sweep.events if e.elements or len({e.rank_before, e.rank_at, e.rank_after}) > 1]
    along = sec.add(
        check(f"ranks at {len(angles)} steering angles, −80° to 80°",
               {k: [v] for k, v in paper_ranks.items()}, {k: sorted(set(v[1:])) for k, v in ranks.items()}),
        check("steering angles with the paper's verdicts", len(angles), n_pattern),
        check("changes of rank or verdict located along the sweep", 0, len(changes)))
    cu = sweep.sweep.component_unique
    varying = [names[i] for i in np.flatnonzero((cu != cu[:1]).any(axis=0))]

    sec.text += [
        "**jmbs** (`jmbs.solvability(model)`, null-space method) at the reference, straight ahead:",
        checks_table(rank_checks),
        table(["element", "type", "bodies", "paper", "jmbs", "components, straight",
                f"components, steered {turn:g}°", "margin [digits]", ""], rows),
        "The paper's eliminated constraints: removing each pair leaves the rank at 20, and "
        "none of the eliminated components is unique. Straight ahead, the x components of B "
        "and C are unique (the knife edges' normals then have no x component); steered, they "
        "are not, as the paper's Fig. 4 shows for B:",
        checks_table(eliminated),
        f"Along a steering sweep (`jmbs.solvability_path`, W1 steered from −80° to 80°, "
        f"{len(angles)} configurations, changes bisected to 1e-10 between them), the rank and "
        "the reactions' verdicts never change:",
        checks_table(along),
        f"The sweep also locates {len(sweep.events) - len(changes)} component-level change(s) "
        f"({', '.join(f'{e.s:+.1e}°' for e in sweep.events if e not in changes) or 'none'}) of "
        f"{', '.join(varying) or 'no component'}: unique only within the criterion's tolerance "
        "(1e-6) of the straight-ahead configuration."]

    # One panel under the other: each panel's legend sits to its right.
    fig, axes = figs.plt.subplots(2, 1, figsize=(9, 8))
    for ax, r, title in zip(axes, (rep, rep_turn), ("straight ahead (reference)", f"W1 steered {turn:g}°")):
        jmbs.plotting.plot_mechanism(model, report=r, ax=ax, title=title)
    sec.text.append(figs.save(fig, "mobile_robot", "Mobile robot: joints coloured by the uniqueness "
                                                   "of their reactions (jmbs.plotting.plot_mechanism)."))
    fig = jmbs.plotting.plot_sweep(sweep, xlabel="steering angle of W1 [deg]")
    sec.text.append(figs.save(fig, "mobile_robot_sweep", "Rank, redundancy and uniqueness along the "
                                                         "steering sweep (jmbs.plotting.plot_sweep)."))
    sec.results = {"reference": {k: v[0] for k, v in ranks.items()}, "rank_margin": rep.rank_margin,
                   "unique": {el: rep.is_unique(el) for el in model.element_names},
                   "components": {el: rep.component_verdicts(el) for el in model.element_names},
                   "components_steered": {el: rep_turn.component_verdicts(el) for el in model.element_names},
                   "sweep_angles_deg": angles.tolist(), "sweep_ranks": {k: v[1:] for k, v in ranks.items()},
                   "sweep_events": [dataclasses.asdict(e) for e in sweep.events]}
    return sec
