"""Paper 003: the redundant manipulator's kinetostatic Tables 8 and 10."""

import jmbs

from .. import papers
from .report import Figures, Section, kinetostatic_tables


def section(figs: Figures, short: bool) -> Section:
    sec = Section("Redundant manipulator: Tables 8 and 10", ("003",),
                   "hydraulic manipulator (spatial, 7 and 9 bodies)")
    sec.text.append(
        "**Mechanism** (`jmbs.examples.redundant_manipulator`): turret, boom and arm (revolutes "
        "A, C, E), a boom and an arm cylinder (revolutes B, D, F, G; cylindrical Hc, Ic), "
        "drives in A, Hc and Ic, at q = (0, 3π/4, 5π/6); overactuated: a twin boom cylinder "
        "(revolutes J, K, cylindrical Lc) with a fourth drive in Lc. The paper's joint names "
        "carry the type (Ar, Br, …); its drives Ar, Hc, Ic, Lc are jmbs's drivers dA, dHc, dIc, "
        "dLc.\n\n"
        "**The paper** (kinetostatic method): the joint A to the ground is the only unique "
        "reaction; all drives are unique in the redundant manipulator, only dA and dIc in the "
        "overactuated one (the twin cylinders share the boom's load in an undetermined way).")
    reports = kinetostatic_tables(sec, papers.MANIPULATOR_TABLES)
    fig = figs.plt.figure(figsize=(15, 6))
    fig.subplots_adjust(wspace=0.45)  # room for the first panel's legend
    for k, (name, rep) in enumerate(reports.items()):
        jmbs.plotting.plot_mechanism(rep.model, report=rep, ax=fig.add_subplot(1, 2, k + 1, projection="3d"),
                                     title=papers.MANIPULATOR_TABLES[name].title)
    sec.text.append(figs.save(fig, "manipulator", "The redundant manipulator and its overactuated "
                                                  "variant; joints coloured by uniqueness."))
    return sec
