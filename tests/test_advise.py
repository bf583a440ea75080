"""jmbs.advise: every release it returns makes the mechanism statically determinate
without changing it: the applied model moves as the original (a fixed-step run of both,
so that the two integrations take the same steps), every reaction of the applied model is
unique, and the reactions that were unique are equal."""

from pathlib import Path

import diffrax
import numpy as np
import pytest

import jmbs

MJCF = Path(jmbs.__file__).parent / "models" / "mjcf" / "four_bar.xml"
T1, DT = 0.1, 2e-3


def run(model):
    """Under gravity, fixed steps (both models take the same steps), no stabilization
    (the drift in 0.1 s is far below the tolerance, and each model would project onto
    its own constraints)."""
    ts = np.linspace(0.0, T1, 3)
    return jmbs.simulate(model, T1, solver=diffrax.Tsit5(), dt0=DT, saveat=ts, stabilization=None,
                         stepsize_controller=diffrax.ConstantStepSize())


def check_claims(model, release, p):
    """The release's own claims, checked with jmbs.solvability on both models."""
    assert len(release.components) == p
    new = release.apply(model)
    assert new.body_names == model.body_names
    rep0, rep1 = jmbs.solvability(model), jmbs.solvability(new)
    assert rep0.redundancy == p and rep1.redundancy == 0 and rep1.dof == rep0.dof
    assert release.checks["redundancy"] == 0 and release.checks["reaction_difference"] < 1e-8
    for name in release.substitutions:
        assert name in new.element_names or release.substitutions[name].kind in ("actuator", "removed")
    return new


def check_release(model, release, p):
    """The claims, and the simulated comparison; returns the applied model."""
    new = check_claims(model, release, p)
    a, b = run(model), run(new)
    scale = max(float(np.abs(np.asarray(a.q)).max()), 1.0)
    np.testing.assert_allclose(b.q, a.q, atol=1e-8 * scale, rtol=0)
    for name in new.element_names:
        assert bool(np.all(b.reactions.is_unique(name))), name
    for name in model.element_names:
        if name in new.element_names and bool(np.all(a.reactions.is_unique(name))):
            f0, f1 = np.asarray(a.reactions.force(name)), np.asarray(b.reactions.force(name))
            m0, m1 = np.asarray(a.reactions.torque(name)), np.asarray(b.reactions.torque(name))
            big = max(np.abs(f0).max(), np.abs(m0).max(), 1.0)
            np.testing.assert_allclose(f1, f0, atol=1e-7 * big)
            np.testing.assert_allclose(m1, m0, atol=1e-7 * big)
    return new


def test_parallelogram_with_a_third_crank():
    """p = 1; of the equivalent releases the middle crank's comes first (symmetry), and
    the release is a pin in a slot."""
    model = jmbs.load("parallelogram")
    advice = jmbs.advise(model, n=1)
    assert advice.redundancy == 1 and "p = 1" in advice.message
    best = advice[0]
    assert best.cost_terms["symmetry"] < 0.5  # the middle crank, not an outer one
    assert best.components[0].split(".")[0] in ("O1", "B1")
    assert best.substitutions[best.components[0].split(".")[0]].kind == "pin_in_slot"
    assert "pin in slot" in best.sentences()[0]
    check_release(model, best, 1)


def test_bricard_releases_one_bending_moment_by_a_universal_joint():
    model = jmbs.load("bricard")
    (best,) = jmbs.advise(model, n=1)
    (name,) = best.substitutions
    assert best.substitutions[name].kind == "universal"
    assert best.components[0].split(".")[1] in ("Mx", "My")
    check_claims(model, best, 1)


def test_mjcf_planar_loop_closed_by_a_connect():
    """The four-bar closed by a 3-D connect (a spherical joint): p = 1, released by a
    moment (a universal joint) rather than a force."""
    model = jmbs.from_mjcf(MJCF)
    (best,) = jmbs.advise(model, n=1)
    assert best.cost_terms["forces"] == 0.0
    check_release(model, best, 1)


def three_cranks_in_space():
    """The parallelogram with a third crank in 3-D with revolutes about z, its
    out-of-plane redundancy designed out (the outer cranks on the ground by points on
    lines along z): p = 1, the force along the cranks. A revolute without that force
    is no joint of the table: a revolute whose pin slides along the crank."""
    b = jmbs.ModelBuilder(dim=3, gravity=(0.0, -9.81, 0.0))
    z = (0.0, 0.0, 1.0)
    for k in range(3):
        b.add_body(f"crank{k}", 1.0, (0.1, 0.01, 0.1), (k, 0.5, 0.0), velocity=(-0.25, 0.0, 0.0),
                   angular_velocity=(0.0, 0.0, 0.5))
    b.add_body("coupler", 2.0, (0.01, 0.7, 0.7), (1.0, 1.0, 0.0), velocity=(-0.5, 0.0, 0.0))
    b.add_revolute("O0", b.ground, "crank0", (0.0, 0.0, 0.0), z)
    b.add_inline("O1", b.ground, "crank1", (1.0, 0.0, 0.0), z)
    b.add_inline("O2", b.ground, "crank2", (2.0, 0.0, 0.0), z)
    for k in range(3):
        b.add_revolute(f"A{k}", f"crank{k}", "coupler", (k, 1.0, 0.0), z)
    return b.build()


def test_a_release_no_joint_keeps_is_a_general_joint():
    """Where no joint of the table keeps the rows left (a revolute without the force
    along its crank), the release is a general joint keeping them, proven like any."""
    model = three_cranks_in_space()
    advice = jmbs.advise(model, n=3)
    general = [r for r in advice if any(s.kind == "general" for s in r.substitutions.values())]
    assert general and all(r.cost > advice[0].cost for r in general)  # catalogued joints first
    release = general[0]
    ((name, sub),) = release.substitutions.items()
    assert release.components == (f"{name}.Fy",) and sub.components == ("Fx", "Fz", "Mx", "My")
    assert "general joint keeping Fx, Fz, Mx, My" in release.sentences()[0]
    new = check_release(model, release, 1)
    assert new.element(name).kind == "general" and new.element(name).components == sub.components


def test_determinate_mechanism_gets_no_release_and_says_so():
    advice = jmbs.advise(jmbs.load("four_bar"))
    assert advice == [] and "p = 0" in advice.message and "nothing to release" in advice.message


def test_singular_configuration_is_decided_at_the_generic_rank():
    """A slider-crank driven at the slider, at dead centre: rank 8 there, 9 around it."""
    model = jmbs.examples.slider_crank(theta=0.0, slider_motion="-0.1 * t")
    advice = jmbs.advise(model)
    assert advice == [] and advice.generic
    assert "singular" in advice.message and "generic rank" in advice.message


def test_bad_n():
    with pytest.raises(ValueError, match="n must be a positive integer"):
        jmbs.advise(jmbs.load("four_bar"), n=0)


def test_overactuated_pendulum_driver_becomes_a_force_actuator():
    """Two drivers prescribe the same angle (p = 1): one is made a force actuator on the
    same joint, whose force (the parameter 'D1.force', 0 by default) leaves the other
    driver the whole torque; the joint's unique reaction is unchanged."""
    b = jmbs.ModelBuilder(dim=2, gravity=(0.0, -9.81))
    b.add_body("rod", mass=1.0, inertia=0.1, position=(0.5, 0.0), velocity=(0.0, 0.25),
               angular_velocity=0.5)
    b.add_revolute("O", b.ground, "rod", point=(0.0, 0.0))
    b.add_driver("D1", "O", "0.5 * t")
    b.add_driver("D2", "O", "0.5 * t")
    model = b.build()
    best = jmbs.advise(model, n=1)[0]
    assert best.components in (("D1.M",), ("D2.M",))
    (name,) = best.substitutions
    assert best.substitutions[name].kind == "actuator" and "force actuator" in best.sentences()[0]
    new = check_release(model, best, 1)
    assert name in new.force_names and name not in new.element_names
    assert float(new.params()[f"{name}.force"]) == 0.0


def test_a_release_made_by_hand_applies_and_is_drawn(tmp_path):
    """A pendulum also held by a rod from its pivot: its pivot in a horizontal slot
    (the rod carries the force along it) is a release; apply keeps the names, the new
    model is determinate, and the figure marks the released element."""
    import matplotlib

    matplotlib.use("Agg")
    import jmbs.plotting

    b = jmbs.ModelBuilder(dim=2, gravity=(0.0, -9.81))
    b.add_body("rod", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    b.add_revolute("O", b.ground, "rod", point=(0.0, 0.0))
    b.add_distance("L", b.ground, "rod", point_i=(0.0, 0.0), point_j=(1.0, 0.0))
    model = b.build()
    sub = jmbs.Substitution("O", "revolute", "pin_in_slot", {"point": (0.0, 0.0), "axis": (1.0, 0.0)})
    release = jmbs.Release(("O.Fx",), {"O": sub}, cost=12.0)
    new = release.apply(model)
    assert new.element_names == ("O", "L") and new.element("O").kind == "pin_in_slot"
    rep = jmbs.solvability(new)
    assert rep.redundancy == 0 and rep.dof == jmbs.solvability(model).dof == 1
    assert "replace O (revolute) by a pin in slot joint" in release.sentences()[0]
    ax = jmbs.plotting.plot_release(model, release)
    assert any("O: revolute -> pin_in_slot" in t.get_text() for t in ax.texts)
    ax.figure.savefig(tmp_path / "release.png")
    assert "<table>" in release._repr_html_()
