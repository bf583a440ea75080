"""Andrews' squeezing mechanism (Hairer & Wanner, Solving ODEs II, VII.7; the test set for
IVP solvers, `andrews.f`) in absolute coordinates, from jmbs's elements.

The test set writes it in seven relative angles `y = (beta, Theta, gamma, Phi, delta,
Omega, epsilon)`; its loop-closure equations `g` and mass matrix `M` fix the bodies
(REFERENCES.md has the data):

- body 1, the crank: turns about O = (0, 0) by `beta`; its end F = rr (cos beta, sin beta);
  centre of mass at `ra` from O (`M11 = m1 ra^2 + ... + i1`).
- body 2: from F to E = F - d (cos(beta + Theta), sin(...)), angle `beta + Theta`;
  centre of mass at `da` from F towards E (`m2 (rr^2 - 2 da rr cos Theta + da^2)`).
- body 3, the triangle: turns about B by `gamma`; its corner E = B + ss (sin gamma,
  -cos gamma) (`g1, g2`), the spring's point D = B + sd (cos gamma, sin gamma) +
  sc (sin gamma, -cos gamma), its centre of mass at distance sqrt(sa^2 + sb^2) from B
  (`M33`; placed like D, at (sa, sb)).
- body 5: turns about A by `delta`; G = A + zt (cos delta, sin delta); body 4 hangs at G
  with angle `Phi + delta` and reaches E = G + e (sin(Phi + delta), -cos(Phi + delta))
  (`g3, g4`); body 4's centre of mass at `e - ea` from G (`M44`, `M54`, `M55`), body 5's
  at distance sqrt(ta^2 + tb^2) from A (placed at (ta, tb)).
- body 7: turns about A by `epsilon`; H = A + u (sin eps, -cos eps); body 6 hangs at H
  with angle `Omega + epsilon` and reaches E = H + zf (cos(Omega + eps), sin(...))
  (`g5, g6`); body 6's centre of mass at `zf - fa` from H (`M66`, `M76`, `M77`),
  body 7's at distance sqrt(ua^2 + ub^2) from A (placed at (ub, ua)).

Bodies 3, 5 and 7 turn about fixed pivots and there is no gravity, so where on its
circle their centre of mass lies does not change the motion (only the pivots'
reactions). Ten revolute joints (O, F, B, A to 5, A to 7, G, H, and E joining body 2
to bodies 3, 4 and 6) leave one degree of freedom; the spring (c0, l0) pulls D
towards C and the torque `mom` drives the crank. The inertias are about the centres
of mass.
"""

import math

import diffrax
import numpy as np

from .._builder.builder import ModelBuilder
from .._model import Model

# The test set's parameters (SI units).
ANDREWS = dict(
    m1=.04325, m2=.00365, m3=.02373, m4=.00706, m5=.07050, m6=.00706, m7=.05498,
    xa=-.06934, ya=-.00227, xb=-0.03635, yb=.03273, xc=.014, yc=.072, c0=4530.0,
    i1=2.194e-6, i2=4.410e-7, i3=5.255e-6, i4=5.667e-7, i5=1.169e-5, i6=5.667e-7, i7=1.912e-5,
    d=28e-3, da=115e-4, e=2e-2, ea=1421e-5, rr=7e-3, ra=92e-5, l0=7785e-5,
    ss=35e-3, sa=1874e-5, sb=1043e-5, sc=18e-3, sd=2e-2, ta=2308e-5, tb=916e-5,
    u=4e-2, ua=1228e-5, ub=449e-5, zf=2e-2, zt=4e-2, fa=1421e-5, mom=33e-3,
)
# The consistent initial angles y(0) (at rest).
ANDREWS_Y0 = (-0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
              0.222668390165885884674473185609, 0.487364979543842550225598953530,
              -0.222668390165885884674473185609, 1.23054744454982119249735015568)

BODIES = ("crank", "link2", "triangle", "link4", "lever5", "link6", "lever7")


def _unit(a):
    return np.array([math.cos(a), math.sin(a)])


def _down(a):  # the unit vector (sin a, -cos a): `_unit(a)` turned by -90 degrees
    return np.array([math.sin(a), -math.cos(a)])


def andrews_points(y=ANDREWS_Y0) -> dict[str, np.ndarray]:
    """The joint points, the spring's ends and the centres of mass (global, m) at the
    angles `y` of the test set, from its loop-closure equations."""
    p = ANDREWS
    beta, theta, gamma, phi, delta, omega, eps = map(float, y)
    A, B, C = np.array([p["xa"], p["ya"]]), np.array([p["xb"], p["yb"]]), np.array([p["xc"], p["yc"]])
    F = p["rr"] * _unit(beta)
    E = F - p["d"] * _unit(beta + theta)
    G = A + p["zt"] * _unit(delta)
    H = A + p["u"] * _down(eps)
    return {
        "O": np.zeros(2), "A": A, "B": B, "C": C, "F": F, "E": E, "G": G, "H": H,
        "E_triangle": B + p["ss"] * _down(gamma),
        "E_link4": G + p["e"] * _down(phi + delta),
        "E_link6": H + p["zf"] * _unit(omega + eps),
        "D": B + p["sd"] * _unit(gamma) + p["sc"] * _down(gamma),
        "crank": p["ra"] * _unit(beta),
        "link2": F - p["da"] * _unit(beta + theta),
        "triangle": B + p["sa"] * _unit(gamma) + p["sb"] * _down(gamma),
        "link4": G + (p["e"] - p["ea"]) * _down(phi + delta),
        "lever5": A + p["ta"] * _unit(delta) + p["tb"] * _down(delta),
        "link6": H + (p["zf"] - p["fa"]) * _unit(omega + eps),
        "lever7": A + p["ua"] * _down(eps) + p["ub"] * _unit(eps),
    }


def body_angles(y) -> np.ndarray:
    """The seven bodies' absolute angles from the test set's relative angles."""
    beta, theta, gamma, phi, delta, omega, eps = y
    return np.array([beta, beta + theta, gamma, phi + delta, delta, omega + eps, eps])


def andrews_squeezer() -> Model:
    """Andrews' squeezing mechanism at the test set's initial configuration, at rest."""
    p, y0 = ANDREWS, ANDREWS_Y0
    pts = andrews_points(y0)
    angles = body_angles(y0)
    b = ModelBuilder(dim=2)
    for k, name in enumerate(BODIES):
        b.add_body(name, mass=p[f"m{k + 1}"], inertia=p[f"i{k + 1}"], position=pts[name],
                   angle=angles[k])
    g = b.ground
    b.add_revolute("O", g, "crank", pts["O"])
    b.add_revolute("F", "crank", "link2", pts["F"])
    b.add_revolute("B", g, "triangle", pts["B"])
    b.add_revolute("A5", g, "lever5", pts["A"])
    b.add_revolute("A7", g, "lever7", pts["A"])
    b.add_revolute("G", "lever5", "link4", pts["G"])
    b.add_revolute("H", "lever7", "link6", pts["H"])
    b.add_revolute("E3", "link2", "triangle", pts["E"])
    b.add_revolute("E4", "link2", "link4", pts["E"])
    b.add_revolute("E6", "link2", "link6", pts["E"])
    b.add_spring_damper("spring", g, "triangle", pts["C"], pts["D"], stiffness=p["c0"],
                        rest_length=p["l0"])
    b.add_torque("mom", "crank", p["mom"])
    return b.build()


def minimal_angles(model: Model, q, v) -> tuple[np.ndarray, np.ndarray]:
    """The test set's seven angles and their rates from jmbs's state `(q, v)`."""
    phi = np.asarray(q, dtype=float).reshape(-1, 3)[:, 2]
    w = np.asarray(v, dtype=float).reshape(-1, 3)[:, 2]

    def relative(x):  # (beta, Theta, gamma, Phi, delta, Omega, epsilon)
        return np.array([x[0], x[1] - x[0], x[2], x[3] - x[4], x[4], x[5] - x[6], x[6]])

    return relative(phi), relative(w)


def recommended_run() -> dict:
    """`jmbs.simulate` settings that reproduce the test set's reference at t = 0.03 s to
    8 significant digits in the angles and 6 in the rates (docs/forces.md): the cheapest
    found, `Elimination` and `Dopri8` at 1e-8 (86 steps; errors 8.1e-10 and 1.1e-7)."""
    from .._formulations.elimination import Elimination

    return dict(formulation=Elimination(), solver=diffrax.Dopri8(),
                stepsize_controller=diffrax.PIDController(rtol=1e-8, atol=1e-8),
                max_steps=200_000)
