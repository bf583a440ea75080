"""Redundant and overactuated hydraulic manipulators (Pękal & Frączek, kinetostatics paper, 4.4–4.5)."""

import math

import numpy as np

from .._builder.builder import ModelBuilder
from .._model import Model

G = 9.81
PAPER_Q = (0.0, 3 * math.pi / 4, 5 * math.pi / 6)

# The paper gives no dimensions; these are plausible ones for a 1.6 m / 1.2 m arm.
# Points are in the arm's vertical plane, as (horizontal, height) in the turret frame
# for the turret, and as (along, normal) in the link frames for the boom and the arm.
COLUMN = 1.0           # height of the boom pivot C above A
BOOM = 1.6             # C to E
ARM = 1.2              # E to the tip
B_TURRET = (0.3, 0.3)  # lower pivot of the boom cylinder, on the turret
D_BOOM = (0.8, 0.0)    # boom-cylinder rod eye, on the boom
F_BOOM = (0.9, 0.25)   # arm-cylinder pivot, on top of the boom
G_ARM = (-0.15, 0.3)   # arm-cylinder rod eye, on a lever of the arm behind E
CYLINDER = 0.5         # distance from a cylinder's pivot to the cylindrical joint's point
TWIN_OFFSET = 0.3      # lateral offset of the second (parallel) boom cylinder


# Driver motion: hold the reference value (text motions are equal when their text is,
# so models of different configurations share compiled code).
HOLD = "0"


def _turret_rotation(phi01: float) -> np.ndarray:
    c, s = math.cos(phi01), math.sin(phi01)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _plane_frame(phi01: float, elevation: float) -> np.ndarray:
    """Body -> global rotation of a link in the arm plane: x along the link at
    `elevation` above the horizontal, y along the pin axes (the turret's y)."""
    c, s = math.cos(elevation), math.sin(elevation)
    return _turret_rotation(phi01) @ np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])


def _rod_inertia(mass: float, length: float, width: float) -> tuple[float, float, float]:
    """Principal inertia of a square-section bar along its x axis."""
    iyy = mass * (length**2 + width**2) / 12
    return mass * width**2 / 6, iyy, iyy


def redundant_manipulator(overactuated: bool = False, q=PAPER_Q) -> Model:
    """Three-DOF hydraulic manipulator with two actuator loops (7 bodies, 9 joints).

    Bodies: turret 1 (revolute `A` to the ground, vertical axis), boom 2 (revolute
    `C` on the turret), arm 3 (revolute `E` on the boom), boom cylinder 4 / piston 5
    (revolutes `B` on the turret, `D` on the boom, cylindrical `Hc` between them),
    arm cylinder 6 / piston 7 (revolutes `F` on the boom, `G` on the arm, cylindrical
    `Ic`). Drivers `dA` (turret angle), `dHc`, `dIc` (cylinder slides). With
    `overactuated`, a second boom cylinder 8 / piston 9 parallel to the first
    (revolutes `J` on the turret, `K` on the boom, cylindrical `Lc`, driver `dLc`)
    makes the drives redundant.

    `q = (phi01, phi12, phi23)` is the configuration: the turret angle about the
    vertical, the angle at C between the column (pointing down to A) and the boom,
    and the angle at E between the boom (pointing back to C) and the arm, the arm
    bending down. The paper's `(0, 3 pi/4, 5 pi/6)` puts the boom 45 degrees and the
    arm 15 degrees above the horizontal. Every body's joint geometry is the same in
    its own frame for every `q` (a cylindrical joint's point may move along its
    axis, which only shifts the slide's zero), so the models built for different `q`
    are configurations of one mechanism; the drivers are measured from each model's
    own reference.

    Elements are added in the paper's order of unknowns: `A, B, C, D, E, F, G, Hc,
    Ic, dA, dHc, dIc` (then `J, K, Lc, dLc`), so the rows of `C` follow its vector
    `x`. Gravity is `-z`.

    Counts in absolute coordinates: `nc = 7 * 5 + 2 * 4 + 3 = 46` rows (the paper's
    unknowns), `nv = 6 * 7 = 42` (its equations), `rank(C) = 42` (`rank A = 42`:
    `A` is `C^T` with each body's wrench re-expressed), `p = 4`, `dof = 0` (3 without
    the drivers). Each actuator loop (three parallel pins and a cylinder axis in
    their plane) is planar, so its spatial joints repeat two of the plane's
    restrictions (the force along the pins and a moment in the plane): two
    redundancies per loop. Overactuated: `61 x 54`, rank 54, `p = 4 + 2 + 1 = 7`
    (the twin loop and its dependent drive).
    """
    phi01, phi12, phi23 = (float(v) for v in q)
    R1 = _turret_rotation(phi01)
    e2 = phi12 - math.pi / 2                 # boom elevation
    e3 = phi12 + phi23 - 3 * math.pi / 2     # arm elevation
    u2, u3 = np.array([math.cos(e2), math.sin(e2)]), np.array([math.cos(e3), math.sin(e3)])
    n2, n3 = np.array([-u2[1], u2[0]]), np.array([-u3[1], u3[0]])

    # Points in the arm plane (horizontal, height), then in global coordinates.
    C = np.array([0.0, COLUMN])
    E = C + BOOM * u2
    P = {"A": np.zeros(2), "C": C, "E": E, "B": np.asarray(B_TURRET),
         "D": C + D_BOOM[0] * u2 + D_BOOM[1] * n2, "F": C + F_BOOM[0] * u2 + F_BOOM[1] * n2,
         "G": E + G_ARM[0] * u3 + G_ARM[1] * n3}

    def glob(p, lateral=0.0):
        return R1 @ np.array([p[0], lateral, p[1]])

    y_pin, z_up = R1[:, 1], np.array([0.0, 0.0, 1.0])
    b = ModelBuilder(dim=3, gravity=(0.0, 0.0, -G))
    b.add_body("turret", mass=30.0, inertia=(2.6, 2.6, 0.1), position=glob(C / 2), rotation=R1)
    b.add_body("boom", mass=20.0, inertia=_rod_inertia(20.0, BOOM, 0.1),
               position=glob(C + BOOM / 2 * u2), rotation=_plane_frame(phi01, e2))
    b.add_body("arm", mass=12.0, inertia=_rod_inertia(12.0, ARM, 0.1),
               position=glob(E + ARM / 2 * u3), rotation=_plane_frame(phi01, e3))

    def actuator(names, lower, upper, lateral=0.0):
        """Cylinder (pivot `lower`) and piston (rod eye `upper`); returns the
        cylindrical joint's point and axis. The centres of mass sit at fixed
        distances from the pivots, so the bodies keep their geometry as they slide."""
        axis2 = (upper - lower) / np.linalg.norm(upper - lower)
        R = _plane_frame(phi01, math.atan2(axis2[1], axis2[0]))
        b.add_body(names[0], mass=4.0, inertia=_rod_inertia(4.0, 0.6, 0.08),
                   position=glob(lower + 0.3 * axis2, lateral), rotation=R)
        b.add_body(names[1], mass=2.0, inertia=_rod_inertia(2.0, 0.6, 0.04),
                   position=glob(upper - 0.3 * axis2, lateral), rotation=R)
        return glob(lower + CYLINDER * axis2, lateral), R[:, 0]

    Hc_point, Hc_axis = actuator(("boom_cylinder", "boom_piston"), P["B"], P["D"])
    Ic_point, Ic_axis = actuator(("arm_cylinder", "arm_piston"), P["F"], P["G"])

    b.add_revolute("A", b.ground, "turret", point=glob(P["A"]), axis=z_up)
    b.add_revolute("B", "turret", "boom_cylinder", point=glob(P["B"]), axis=y_pin)
    b.add_revolute("C", "turret", "boom", point=glob(P["C"]), axis=y_pin)
    b.add_revolute("D", "boom", "boom_piston", point=glob(P["D"]), axis=y_pin)
    b.add_revolute("E", "boom", "arm", point=glob(P["E"]), axis=y_pin)
    b.add_revolute("F", "boom", "arm_cylinder", point=glob(P["F"]), axis=y_pin)
    b.add_revolute("G", "arm", "arm_piston", point=glob(P["G"]), axis=y_pin)
    b.add_cylindrical("Hc", "boom_cylinder", "boom_piston", point=Hc_point, axis=Hc_axis)
    b.add_cylindrical("Ic", "arm_cylinder", "arm_piston", point=Ic_point, axis=Ic_axis)
    b.add_driver("dA", joint="A", motion=HOLD)
    b.add_driver("dHc", joint="Hc", motion=HOLD, coordinate="slide")
    b.add_driver("dIc", joint="Ic", motion=HOLD, coordinate="slide")
    if overactuated:
        # Bodies 8 and 9: a twin of the boom cylinder, shifted along the pin axes, so
        # its slide always equals that of Hc (the two drives are dependent).
        Lc_point, Lc_axis = actuator(("boom_cylinder2", "boom_piston2"), P["B"], P["D"],
                                     lateral=TWIN_OFFSET)
        b.add_revolute("J", "turret", "boom_cylinder2", point=glob(P["B"], TWIN_OFFSET),
                       axis=y_pin)
        b.add_revolute("K", "boom", "boom_piston2", point=glob(P["D"], TWIN_OFFSET), axis=y_pin)
        b.add_cylindrical("Lc", "boom_cylinder2", "boom_piston2", point=Lc_point, axis=Lc_axis)
        b.add_driver("dLc", joint="Lc", motion=HOLD, coordinate="slide")
    return b.build()
