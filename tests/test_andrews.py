"""Andrews' squeezing mechanism against the test set (Hairer & Wanner): the geometry
closes, the initial accelerations and multipliers are the test set's, and the run to
t = 0.03 s reproduces its reference solution (PSIDE at 1e-14)."""

import math

import numpy as np

import jmbs
from jmbs.examples.andrews import (
    ANDREWS,
    ANDREWS_Y0,
    BODIES,
    andrews_points,
    andrews_squeezer,
    body_angles,
    minimal_angles,
    recommended_run,
)
from jmbs.reproduce import papers


def test_the_minimal_coordinates_mass_matrix_is_the_test_sets():
    """The absolute-coordinate bodies, mapped through the test set's angles, give its
    mass matrix M(y) (entries transcribed from andrews.f) at the start and at random
    angles: the centres of mass and inertias are right."""
    p = ANDREWS
    rng = np.random.default_rng(0)
    for y in [np.array(ANDREWS_Y0)] + [rng.uniform(-3, 3, 7) for _ in range(3)]:
        def absolute(y):
            pts = andrews_points(y)
            return np.concatenate([np.r_[pts[n], a] for n, a in zip(BODIES, body_angles(y))])

        h = 1e-6
        J = np.stack([(absolute(y + h * e) - absolute(y - h * e)) / (2 * h) for e in np.eye(7)], axis=1)
        Mb = np.diag(np.concatenate([[p[f"m{k}"], p[f"m{k}"], p[f"i{k}"]] for k in range(1, 8)]))
        M = J.T @ Mb @ J
        _, th, _, ph, _, om, _ = y
        ee, zf = p["e"] - p["ea"], p["zf"] - p["fa"]
        ref = np.zeros((7, 7))
        ref[0, 0] = (p["m1"] * p["ra"] ** 2 + p["m2"] * (p["rr"] ** 2 - 2 * p["da"] * p["rr"] * math.cos(th)
                     + p["da"] ** 2) + p["i1"] + p["i2"])
        ref[1, 0] = ref[0, 1] = p["m2"] * (p["da"] ** 2 - p["da"] * p["rr"] * math.cos(th)) + p["i2"]
        ref[1, 1] = p["m2"] * p["da"] ** 2 + p["i2"]
        ref[2, 2] = p["m3"] * (p["sa"] ** 2 + p["sb"] ** 2) + p["i3"]
        ref[3, 3] = p["m4"] * ee**2 + p["i4"]
        ref[4, 3] = ref[3, 4] = p["m4"] * (ee**2 + p["zt"] * ee * math.sin(ph)) + p["i4"]
        ref[4, 4] = (p["m4"] * (p["zt"] ** 2 + 2 * p["zt"] * ee * math.sin(ph) + ee**2)
                     + p["m5"] * (p["ta"] ** 2 + p["tb"] ** 2) + p["i4"] + p["i5"])
        ref[5, 5] = p["m6"] * zf**2 + p["i6"]
        ref[6, 5] = ref[5, 6] = p["m6"] * (zf**2 - p["u"] * zf * math.sin(om)) + p["i6"]
        ref[6, 6] = (p["m6"] * (zf**2 - 2 * p["u"] * zf * math.sin(om) + p["u"] ** 2)
                     + p["m7"] * (p["ua"] ** 2 + p["ub"] ** 2) + p["i6"] + p["i7"])
        np.testing.assert_allclose(M, ref, rtol=1e-7, atol=1e-7 * np.abs(ref).max())


def test_initial_state_accelerations_and_multipliers_are_the_test_sets():
    model = andrews_squeezer()  # build() checks that the ten joints close at y(0)
    res = jmbs.reactions(model, model.q0, model.v0)
    w_dot = np.asarray(res.v_dot).reshape(-1, 3)[:, 2]
    beta_dd, theta_dd = w_dot[0], w_dot[1] - w_dot[0]
    np.testing.assert_allclose([beta_dd, theta_dd], [14222.4439199541138705911625887,
                                                     -10666.8329399655854029433719415], rtol=1e-10)
    # The test set's M y'' = f - G^T lambda with g1, g2 = E(chain 1-2) - E(triangle): its
    # lambda1, lambda2 are the force that link 2 applies to the triangle at E (joint E3,
    # body j the triangle); lambda3..6 (the E joints of links 4 and 6) are zero at rest.
    force = np.asarray(res.reactions.force("E3"))  # on the triangle, from link 2
    np.testing.assert_allclose(force, [98.5668703962410896057654982170,
                                        -6.12268834425566265503114393122], rtol=1e-9)
    np.testing.assert_allclose(np.asarray(res.reactions.force("E4")), 0.0, atol=1e-9)
    np.testing.assert_allclose(np.asarray(res.reactions.force("E6")), 0.0, atol=1e-9)


def test_reference_solution_at_the_end_is_reproduced():
    model = andrews_squeezer()
    T = papers.ANDREWS_T_END
    sol = jmbs.simulate(model, T, saveat=np.array([0.0, T]), reactions=False, **recommended_run())
    angles, rates = minimal_angles(model, sol.q[-1], sol.v[-1])
    digits_a, digits_r = papers.ANDREWS_DIGITS
    np.testing.assert_allclose(angles, papers.ANDREWS_ANGLES, rtol=0.5 * 10.0 ** (1 - digits_a))
    np.testing.assert_allclose(rates, papers.ANDREWS_RATES, rtol=0.5 * 10.0 ** (1 - digits_r))
