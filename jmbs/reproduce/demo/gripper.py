"""Paper 003: the planar gripper's kinetostatic Tables 2, 4 and 6."""

import jmbs

from .. import papers
from .report import Figures, Section, kinetostatic_tables


def section(figs: Figures, short: bool) -> Section:
    sec = Section("Planar gripper: Tables 2, 4 and 6", ("003",), "gripper (planar, 4 bodies), 3 actuations")
    sec.text.append(
        "**Mechanism** (`jmbs.examples.gripper`): translational joints Bt (ground–1, reaction "
        "along y), Ct (ground–2, along x), Dt (1–2, along (1, 1)), revolutes Br (1–3), Cr (2–4), "
        "Er (3–4), at φ4 = −π/6; without actuation, with a torque drive in Cr, and overactuated "
        "with a second (force) drive in Bt.\n\n"
        "**The paper** builds the free-body-diagram equilibrium `A x = b` (rows: the bodies' "
        "balances, `nv`; columns: reaction components and driving forces, `nc`) and declares "
        "an element's reaction unique iff `‖A_S N_S‖ = 0` with `A_S` of full rank. Its tables "
        "are reproduced below with jmbs's kinetostatic method "
        "(`jmbs.solvability(model, method=\"kinetostatic\")`).")
    reports = kinetostatic_tables(sec, papers.GRIPPER_TABLES)
    fig, axes = figs.plt.subplots(3, 1, figsize=(8, 12), gridspec_kw={"hspace": 0.3})
    for ax, (name, rep) in zip(axes, reports.items()):
        jmbs.plotting.plot_mechanism(rep.model, report=rep, ax=ax, title=papers.GRIPPER_TABLES[name].title)
    sec.text.append(figs.save(fig, "gripper", "The gripper in its three actuations; joints and "
                                              "drives coloured by uniqueness."))
    return sec
