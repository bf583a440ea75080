"""The papers' published results that the bundled mechanisms reproduce (the papers
are listed in `PAPERS`; docs/papers/ has one page per paper).

Data, and the one comparison that the experiments and `jmbs demo` share
(`kinetostatic_comparison`). Verdicts are `"U"` (the reaction or driving force is
unique) or `"N"` (not unique): `verdict(unique)`.
"""

from typing import NamedTuple

import jmbs
from jmbs import SolvabilityReport

from .._solvability.report import verdict as verdict

PAPERS = {
    "000": "Wojtyra & Frączek: solvability of reactions with redundant nonholonomic constraints",
    "001": "Pękal et al.: divide-and-conquer uniqueness analysis of reactions",
    "002": "González, Kövecses, Teichmann & Courchesne: techniques for the simulation of "
           "redundantly constrained multibody systems",
    "003": "Pękal & Frączek: a kinetostatics-based study of uniqueness of reactions and drives "
           "in robotics",
    "A04": "IFToMM: library of computational benchmark problems, A04 Bricard mechanism",
    "HW": "Hairer & Wanner, Solving ODEs II, VII.7, and the test set for IVP solvers: Andrews' "
          "squeezing mechanism",
}


def _same(names: str, verdict: str) -> dict[str, str]:
    """`{element: verdict}` for space-separated element names."""
    return {k: verdict for k in names.split()}


# ----- paper 000, §4: mobile robot with trolley (jmbs.examples.mobile_robot) -----

# Ranks in every nonsingular configuration.
MOBILE_ROBOT_RANKS = {"rank(Phi_q)": 17, "rank(Psi)": 4, "r": 20, "p": 2}
MOBILE_ROBOT = {**_same("A D E F G H drive W5", "U"), **_same("B C W1 W2 W3 W4", "N")}
# The paper's dynamic experiment eliminates two redundant constraints in three ways
# (its rows 6 and 21, 18 and 21, 19 and 21): `(element, component)` pairs.
MOBILE_ROBOT_ELIMINATIONS = (
    (("C", "Fy"), ("W4", "Fn")),
    (("W1", "Fn"), ("W4", "Fn")),
    (("W2", "Fn"), ("W4", "Fn")),
)


# ----- paper 003: kinetostatic tables (jmbs.examples.gripper, redundant_manipulator) -----

class Entry(NamedTuple):
    """One studied element of a kinetostatic table: the criterion `||A_S N_S||`
    (`"= 0"` or `"!= 0"`), the rank of `A_S` (full in every table), the verdict."""

    criterion: str
    set_rank: int
    verdict: str


class Table(NamedTuple):
    """A kinetostatic table: its title, the size of `A` (equations = `nv`, unknowns =
    `nc`), the rank of `A`, and its `Entry` per studied element."""

    title: str
    shape: tuple[int, int]
    rank: int
    elements: dict[str, Entry]


def _entries(names: str, criterion: str, set_rank: int, verdict: str) -> dict[str, Entry]:
    return {k: Entry(criterion, set_rank, verdict) for k in names.split()}


class Obtained(NamedTuple):
    """jmbs's answer for one `Entry`: the criterion value, the rank of `A_S`, the verdict."""

    criterion: float
    set_rank: int
    verdict: str


def kinetostatic_comparison(model, table: Table) -> tuple[SolvabilityReport, dict[str, Obtained]]:
    """jmbs's kinetostatic analysis (at the reference configuration) of the elements of
    a paper's `table`: the report and, per element, what jmbs obtains."""
    rep = jmbs.solvability(model, method="kinetostatic")
    d = rep.decisions
    k = {el: model.element_names.index(el) for el in table.elements}
    return rep, {el: Obtained(float(d.criterion[k[el]]), int(d.set_rank[k[el]]), rep.verdict(el))
                 for el in table.elements}


# Keyed by the mechanism's name in `jmbs.examples.ALL`.
GRIPPER_TABLES = {
    "gripper": Table("Tab. 2, no actuation", (12, 12), 11, {
        **_entries("Bt Ct Dt", "!= 0", 2, "N"), **_entries("Br Cr Er", "= 0", 2, "U")}),
    "gripper_torque": Table("Tab. 4, torque drive in Cr", (12, 13), 12, {
        **_entries("Bt Ct Dt", "!= 0", 2, "N"), **_entries("Br Cr Er", "= 0", 2, "U"),
        **_entries("drive_Cr", "= 0", 1, "U")}),
    "gripper_overactuated": Table("Tab. 6, overactuated (drives in Cr and Bt)", (12, 14), 12, {
        **_entries("Bt Ct Dt Br Cr Er", "!= 0", 2, "N"), **_entries("drive_Cr drive_Bt", "!= 0", 1, "N")}),
}

# The paper's joints Ar, Br, ..., Hc are A, B, ..., Hc; its drives Ar, Hc, Ic, Lc are
# the drivers dA, dHc, dIc, dLc.
MANIPULATOR_TABLES = {
    "redundant_manipulator": Table("Tab. 8, redundant manipulator", (42, 46), 42, {
        **_entries("A", "= 0", 5, "U"), **_entries("B C D E F G", "!= 0", 5, "N"),
        **_entries("Hc Ic", "!= 0", 4, "N"), **_entries("dA dHc dIc", "= 0", 1, "U")}),
    "redundant_manipulator_overactuated": Table("Tab. 10, overactuated (twin boom cylinder)", (54, 61), 54, {
        **_entries("A", "= 0", 5, "U"), **_entries("B C D E F G J K", "!= 0", 5, "N"),
        **_entries("Hc Ic Lc", "!= 0", 4, "N"), **_entries("dA dIc", "= 0", 1, "U"),
        **_entries("dHc dLc", "!= 0", 1, "N")}),
}


# ----- paper 001, §4: spatial parallelogram with a triple pendulum -----

SPATIAL_PARALLELOGRAM = {**_same("A B C D E F G H", "N"), **_same("K L M N P Q R", "U")}
SPATIAL_PARALLELOGRAM_GROUND = ("A", "C", "E", "G", "K", "M")  # the joints to the ground
SPATIAL_PARALLELOGRAM_GROUND_MATRIX = (18, 17)  # size and rank of the ground-connection matrix


# ----- one redundancy shared by a whole loop: no joint reaction is unique -----

PARALLELOGRAM = {"redundancy": 1, "unique": ()}  # jmbs.examples.parallelogram
BRICARD = {"redundancy": 1, "dof": 1, "grubler": 0, "unique": ()}  # IFToMM A04, paper 002
# IFToMM A04: released at rest, the joint point starting at (1, -1, 0) (J3) reaches
# x = -1 at t = 2.5 s and is back at x = +1 at t = 5 s.
BRICARD_SWING = {"t_min": 2.5, "x_min": -1.0, "t_return": 5.0, "x_return": 1.0}


# ----- Andrews' squeezing mechanism (Hairer & Wanner; the test set's andrews.f) -----

# The reference solution at t = 0.03 s (PSIDE, rtol = atol = 1e-14): the seven angles
# (beta, Theta, gamma, Phi, delta, Omega, epsilon) [rad] and their rates [rad/s].
ANDREWS_T_END = 0.03
ANDREWS_ANGLES = (0.1581077119629904e2, -0.1575637105984298e2, 0.4082224013073101e-1,
                  -0.5347301163226948e0, 0.5244099658805304e0, 0.5347301163226948e0,
                  0.1048080741042263e1)
ANDREWS_RATES = (0.1139920302151208e4, -0.1424379294994111e4, 0.1103291221937134e2,
                 0.1929337464421385e2, 0.5735699284790808e0, -0.1929337464421385e2,
                 0.3231791658026955e0)
# Significant digits to reproduce: the angles and the rates.
ANDREWS_DIGITS = (8, 6)
