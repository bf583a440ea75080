"""Solvability analysis: the methods against the definition, the free-body-diagram
matrix against C^T, unit invariance, sweeps against loops, singular
configurations and bad input."""

import functools
import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import PFAFFIAN, PLANAR_JOINTS, SOLVABILITY_METHODS, SPATIAL_JOINTS, add_pair, two_bodies

import jmbs
from jmbs import examples
from jmbs.internal import host_evaluation, sweep_defaults

METHODS = list(SOLVABILITY_METHODS)


@pytest.fixture(scope="module")
def robot():
    return examples.mobile_robot()


@pytest.fixture(scope="module")
def robot_qs():
    lo, hi = examples.steering_range()
    rng = np.random.default_rng(3)
    ds = rng.uniform(lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo), 12)
    return examples.mobile_robot_configurations(ds, rng.uniform(-1, 1, 12))


def _reference_decisions(C: np.ndarray, sets: np.ndarray, tol: float = 1e-7):
    """The definition with NumPy on the raw (unscaled) matrix: `N` from an SVD of
    `C^T`; a set is unique iff `C_X^T N_X = 0`, a component iff its row of `N` is."""
    U, s, _ = np.linalg.svd(C)
    r = int(np.sum(s > 1e-9 * s[0]))
    N = U[:, r:]
    scale = np.abs(C).max()
    unique = [np.abs(C[m].T @ N[m]).max(initial=0.0) < tol * scale for m in sets]
    return r, np.array(unique), np.linalg.norm(N, axis=1) < tol


# ----- the free-body-diagram matrix is C^T on the constraint manifold -----

def _every_kind(dim: int) -> jmbs.Model:
    """One model with a pair of bodies per element kind (and kinds on the ground)."""
    kinds = ([(k, False) for k in (PLANAR_JOINTS if dim == 2 else SPATIAL_JOINTS)]
             + [(k, False) for k in PFAFFIAN[dim]]
             + [("revolute", True) if dim == 2 else ("cylindrical+angle", True)])
    g = (0.0, -9.81) if dim == 2 else (0.0, 0.0, -9.81)
    b = jmbs.ModelBuilder(dim=dim, gravity=g)
    for k, (kind, ground) in enumerate(kinds):
        add_pair(b, dim, kind, ground, prefix=f"k{k}_", offset=3.0 * k)
    return b.build(check=False)


@pytest.mark.parametrize("dim", [2, 3])
def test_kinetostatic_matrix_is_CT_on_the_manifold(dim):
    """Every element kind's reaction basis, away from the reference configuration."""
    model = _every_kind(dim)
    ts = np.linspace(0.0, 1.5, 3)
    qs, ok = jmbs.sample_configurations(model, 3, key=7, t=ts, scale=0.3, method="perturb",
                                        ranks=False)
    assert bool(np.all(ok))
    for q, t in zip(np.asarray(qs), ts):
        assert np.abs(q - np.asarray(model.q0)).max() > 0.05
        A = np.asarray(jmbs.kinetostatic_matrix(model, q, t))
        C = np.asarray(jmbs.constraint_matrix(model, q, t))
        np.testing.assert_allclose(A, C.T, atol=1e-10)


def test_kinetostatic_columns_are_the_free_body_diagram():
    """A planar revolute's `Fx` column by hand: +x force on body j at the joint
    point, its moment about j's centre, the opposite on body i."""
    model = two_bodies(2, "revolute")
    q = np.asarray(model.q0)
    A = np.asarray(jmbs.kinetostatic_matrix(model, q))
    P = np.array([0.6, 0.3])
    ri, rj = q[0:2], q[3:5]
    fx_on_j = np.array([1.0, 0.0, -(P - rj)[1]])
    fx_on_i = -np.array([1.0, 0.0, -(P - ri)[1]])
    np.testing.assert_allclose(A[:, 0], np.r_[fx_on_i, fx_on_j], atol=1e-15)


# ----- the methods against the definition -----

@pytest.mark.parametrize("method", METHODS)
def test_methods_follow_the_definition(robot, robot_qs, method):
    sets = np.zeros((len(robot.element_names), robot.nc), bool)
    for k, name in enumerate(robot.element_names):
        sets[k, robot.rows(name)] = True
    for q in robot_qs[:4]:
        rep = jmbs.solvability(robot, q, method=method)
        r, unique, comps = _reference_decisions(np.asarray(jmbs.constraint_matrix(robot, q)), sets)
        assert rep.rank == r == 20 and rep.redundancy == 2 and rep.dof == 1
        assert [rep.is_unique(n) for n in robot.element_names] == list(unique)
        got = np.concatenate([rep.unique_components(n) for n in robot.element_names])
        np.testing.assert_array_equal(got, comps)
        assert rep.rank_margin > 4 and not rep.singular and not rep.near_singular


def test_groups():
    """Two knife edges on one axle line (W3, W4) and one elsewhere (W1) on a single
    body: how W3 and W4 share the lateral force is not determined, their sum is."""
    b = jmbs.ModelBuilder(dim=2)
    cart = b.add_body("cart", mass=2.0, inertia=0.2, position=(0.0, 0.0))
    b.add_knife_edge("W3", cart, point=(0.0, 0.5), direction=(1.0, 0.0))
    b.add_knife_edge("W4", cart, point=(0.0, -0.5), direction=(1.0, 0.0))
    b.add_knife_edge("W1", cart, point=(1.0, 0.0), direction=(1.0, 0.3))
    model = b.build()
    for method in METHODS:
        rep = jmbs.solvability(model, method=method)
        assert rep.redundancy == 1 and rep.dof == 1
        assert not rep.is_unique("W3") and not rep.is_unique("W4") and rep.is_unique("W1")
        assert rep.is_unique_group(["W3", "W4"]) and rep.is_unique_group(["W3", "W4", "W1"])
        assert not rep.is_unique_group(["W3", "W1"])
        assert rep.is_unique_group("W1") and not rep.is_unique_group("W4")


# ----- units -----

LENGTH_KEYS = (".position", ".point", ".point_i", ".point_j", ".length")


def _rescaled(model: jmbs.Model, length: float, mass: float):
    """The same model in other units: lengths times `length`, masses times `mass`."""
    new = {}
    for key, value in model.params().items():
        if key.endswith(LENGTH_KEYS) or key == "gravity":
            new[key] = value * length
        elif key.endswith(".mass"):
            new[key] = value * mass
        elif key.endswith(".inertia"):
            new[key] = value * mass * length**2
    return model.with_params(new)


def _rescale_q(model: jmbs.Model, q: np.ndarray, length: float) -> np.ndarray:
    nqb = 3 if model.dim == 2 else 7
    qb = np.array(q, dtype=float).reshape(-1, nqb)
    qb[:, : model.dim] *= length
    return qb.ravel()


UNIT_MODELS = {
    "mobile_robot": lambda: examples.mobile_robot(),
    "gripper_overactuated": lambda: examples.gripper("overactuated"),
    "redundant_manipulator": lambda: examples.redundant_manipulator(overactuated=True),
    "spatial_parallelogram": lambda: examples.spatial_parallelogram(),
}


@pytest.mark.parametrize("name", list(UNIT_MODELS))
def test_decisions_do_not_depend_on_units(name):
    """Metres to millimetres and kilograms to grams change no decision, and the
    equilibrated matrix is the same to rounding."""
    model = UNIT_MODELS[name]()
    mm = _rescaled(model, 1000.0, 1000.0)
    q, q_mm = np.asarray(model.q0), _rescale_q(model, model.q0, 1000.0)
    np.testing.assert_allclose(np.asarray(jmbs.phi(mm, q_mm)), 0.0, atol=1e-9)
    E = np.asarray(jmbs.equilibrate(model, jmbs.constraint_matrix(model, q)))
    E_mm = np.asarray(jmbs.equilibrate(mm, jmbs.constraint_matrix(mm, q_mm)))
    np.testing.assert_allclose(E_mm, E, atol=1e-12)
    for method in METHODS:
        a, b = jmbs.solvability(model, q, method=method), jmbs.solvability(mm, q_mm, method=method)
        assert a.rank == b.rank
        np.testing.assert_array_equal(a.decisions.unique, b.decisions.unique)
        np.testing.assert_array_equal(a.decisions.component_unique, b.decisions.component_unique)


def test_without_equilibration_extreme_units_change_the_rank(robot):
    """Why the scaling matters: in nanometres the raw matrix's angular rows are 1e-9
    of the others, below the rank tolerance; the equilibrated one is unchanged."""
    nm = _rescaled(robot, 1e9, 1.0)
    q = _rescale_q(robot, robot.q0, 1e9)
    C = np.asarray(jmbs.constraint_matrix(nm, q))
    s = np.linalg.svd(C, compute_uv=False)
    assert np.sum(s > 1e-8 * s[0]) != 20
    assert jmbs.solvability(nm, q).rank == 20


# ----- sweeps -----

@pytest.mark.parametrize("method", ["qr", "rank"])
def test_sweep_equals_a_loop(robot, robot_qs, method):
    sw = jmbs.solvability_sweep(robot, robot_qs, method=method, batch_size=5)  # chunks + padding
    assert len(sw) == len(robot_qs)
    for k, q in enumerate(robot_qs):
        rep = jmbs.solvability(robot, q, method=method)
        assert sw.rank[k] == rep.rank
        np.testing.assert_array_equal(sw.unique[k], rep.decisions.unique)
        np.testing.assert_array_equal(sw.component_unique[k], rep.decisions.component_unique)
        np.testing.assert_allclose(sw.criterion[k], rep.decisions.criterion, rtol=1e-9, atol=1e-14)
    np.testing.assert_array_equal(sw.is_unique("W5"), True)
    np.testing.assert_array_equal(sw.is_unique("B"), False)


def test_accelerator_defaults_decide_as_the_cpu_default(robot, robot_qs):
    """On an accelerator a sweep defaults to the divide-and-conquer analysis in batches of
    about 1 GiB of matrices (`sweep_defaults`: the dense methods' factorizations batch
    badly there). Run here, those choices make the CPU default's decisions."""
    method, batch = sweep_defaults(robot, "gpu")
    assert (method, batch) == ("dca", 131072) and sweep_defaults(robot, "cpu") == ("nullspace", 2048)
    chain = examples.n_four_bar(40)  # C 242 x 243: 2282 matrices in 1 GiB
    assert sweep_defaults(chain, "gpu") == ("dca", 2282)
    fast, default = (jmbs.solvability_sweep(robot, robot_qs, method=method, batch_size=batch),
                     jmbs.solvability_sweep(robot, robot_qs))
    assert default.method == "nullspace" and fast.method == "dca"
    np.testing.assert_array_equal(fast.rank, default.rank)
    np.testing.assert_array_equal(fast.unique, default.unique)
    np.testing.assert_array_equal(fast.component_unique, default.component_unique)


def test_sweep_is_traceable(robot, robot_qs):
    """The sweep's core is a pure function: jit/vmap of the decisions directly."""
    f = jax.jit(jax.vmap(lambda q: jmbs.solvability_decisions(robot, q, 0.0, jmbs.QR()).rank))
    np.testing.assert_array_equal(np.asarray(f(jnp.asarray(robot_qs))), 20)
    # With the element masks passed explicitly, and a whole element set as one group.
    sets = jmbs.element_sets(robot)
    assert sets.shape == (len(robot.element_names), robot.nc) and (sets.sum(axis=0) == 1).all()
    g = jax.jit(jax.vmap(lambda q: jmbs.solvability_decisions(robot, q, method="qr",
                                                              sets=sets).unique))
    np.testing.assert_array_equal(np.asarray(g(jnp.asarray(robot_qs[:3]))),
                                  [jmbs.solvability(robot, q).decisions.unique for q in robot_qs[:3]])


# ----- singular configurations -----

chain_q = functools.partial(examples.n_four_bar_configuration, 2)  # the fixture's chain


@pytest.fixture(scope="module")
def n_four_bar():
    return examples.n_four_bar(2)


def test_margin_shrinks_near_a_singular_configuration(n_four_bar):
    """The N-four-bar (N = 2) is singular when its links lie flat (angle 0): the
    rank drops by N and the dof jumps from 1 to N + 1 (IFToMM A02)."""
    margins = []
    for th in (0.5, 1e-2, 1e-4, 1e-6):
        rep = jmbs.solvability(n_four_bar, chain_q(th))
        assert rep.rank == 14 and not rep.singular
        margins.append(rep.rank_margin)
    assert np.all(np.diff(margins) < -1.5)  # about two digits per two digits of angle
    assert not jmbs.solvability(n_four_bar, chain_q(0.5)).near_singular
    assert jmbs.solvability(n_four_bar, chain_q(1e-6)).near_singular
    assert "close to a singular configuration" in str(jmbs.solvability(n_four_bar,
                                                                      chain_q(1e-6)))


@pytest.mark.parametrize("method", METHODS)
def test_at_a_singular_configuration_the_decisions_follow_the_rank(n_four_bar, method):
    rep = jmbs.solvability(n_four_bar, chain_q(0.0), method=method)
    assert rep.rank == 12 and rep.redundancy == 2 and rep.dof == 3
    assert rep.singular and rep.reference_rank == 14
    assert "singular configuration" in str(rep)
    # Flat and collinear: the pins' forces along the line are indeterminate, the
    # vertical ones (statically determinate) are not.
    for name in n_four_bar.element_names:
        assert not rep.is_unique(name)
        np.testing.assert_array_equal(rep.unique_components(name), [False, True])


def test_path_locates_an_isolated_singular_configuration(n_four_bar):
    grid = np.linspace(-0.95, 1.3, 12)  # never hits 0
    res = jmbs.solvability_path(n_four_bar, lambda th: chain_q(th), grid)
    assert np.all(res.sweep.rank == 14)
    (event,) = res.events
    assert event.kind == "singular" and abs(event.s) < 1e-9
    assert event.s_after - event.s_before <= 2e-10
    assert (event.rank_before, event.rank_at, event.rank_after) == (14, 12, 14)
    assert set(event.elements) == set(n_four_bar.element_names)
    assert set(event.components) <= set(jmbs.component_names(n_four_bar))
    assert event.describe().startswith("singular configuration, rank 14 -> 12 -> 14; reactions "
                                       "that change: ")


def test_path_bracket_width_is_xtol_and_tol_is_deprecated(n_four_bar):
    grid = np.linspace(-1.0, 1.0, 11)  # a grid point at the singular configuration

    def path(th):
        return chain_q(th)

    wide = jmbs.solvability_path(n_four_bar, path, grid, method="qr", xtol=1e-4)
    assert len(wide.events) >= 2
    assert all(1e-5 < e.s_after - e.s_before <= 1e-4 for e in wide.events)
    with pytest.warns(DeprecationWarning, match="xtol"):
        old = jmbs.solvability_path(n_four_bar, path, grid, method="qr", tol=1e-4)
    assert old.events == wide.events


def test_driver_path_sweeps_a_driver_coordinate():
    """The slider-crank's crank angle from the reference (pi/6) on: the path's model has
    time as the driver's coordinate, its configurations are assembled, and the events
    are located along it."""
    model = examples.slider_crank(omega=2.0)
    s = np.linspace(0.1, 1.0, 4)
    path = jmbs.driver_path(model, "drive", s)
    assert path.unit == "rad" and path.qs.shape == (4, model.nq)
    for k, x in enumerate(s):
        q, t = path(x)
        assert t == x and np.abs(np.asarray(jmbs.phi(path.model, q, t))).max() < 1e-12
    q, t = path(0.55)  # between grid points: assembled from the nearest
    assert np.abs(np.asarray(jmbs.phi(path.model, q, 0.55))).max() < 1e-12
    res = jmbs.solvability_path(path.model, path, s)
    assert (res.sweep.rank == model.nc).all() and res.events == []
    with pytest.raises(ValueError, match="unknown driver 'nope'"):
        jmbs.driver_path(model, "nope", s)
    with pytest.raises(ValueError, match="no drivers"):
        jmbs.driver_path(examples.four_bar(), "d", s)


def test_sweeping_one_drive_of_an_overactuated_gripper_releases_the_other():
    """The overactuated gripper (drives on Cr and Bt, one degree of freedom): holding
    drive_Bt while drive_Cr moves would lock the mechanism; it is released and follows,
    its slide equal to the closed form `gripper_slide` at every grid point."""
    from jmbs.examples.gripper import gripper_slide

    model = examples.gripper("overactuated")
    assert jmbs.redundant_drivers(model, "drive_Cr") == ("drive_Bt",)
    assert jmbs.redundant_drivers(examples.gripper("torque"), "drive_Cr") == ()
    s = np.linspace(-0.2, 0.2, 9)
    path = jmbs.driver_path(model, "drive_Cr", s)
    slide = jmbs.joint_coordinates(model, path.qs)["Bt.slide"]
    phi4 = -math.pi / 6
    np.testing.assert_allclose(slide, gripper_slide(phi4 + s) - gripper_slide(phi4), atol=1e-10)
    res = jmbs.solvability_path(path.model, path, s)
    assert (res.sweep.rank == model.nv).all()


def test_time_path_follows_every_driver():
    """Along time the driven slider-crank's crank angle is pi/6 + 2 t (its motion)."""
    model = examples.slider_crank(omega=2.0)
    ts = np.linspace(0.0, 1.0, 6)
    path = jmbs.time_path(model, ts)
    assert path.driver is None and path.unit == "s"
    np.testing.assert_allclose(jmbs.joint_coordinates(model, path.qs)["O.angle"], 2.0 * ts,
                               atol=1e-10)
    res = jmbs.solvability_path(model, path, ts)
    assert (res.sweep.rank == model.nc).all()


def test_path_reports_a_singular_configuration_it_passes_closely(n_four_bar):
    """A path that stays 1e-7 rad from the flat configuration never loses rank at the
    default tolerance (as Newton-assembled configurations near a singular one do not):
    the minimum is reported as near-singular, with its marginal rank decision."""
    grid = np.linspace(-0.95, 1.3, 12)
    res = jmbs.solvability_path(n_four_bar, lambda th: chain_q(1e-7 + abs(th)), grid)
    (event,) = res.events
    assert event.kind == "near_singular" and abs(event.s) < 1e-9
    assert (event.rank_before, event.rank_at, event.rank_after) == (14, 14, 14)
    assert event.rank_margin < 2.0  # MARGINAL_DECADES
    # Elsewhere on the path the rank decision is far from marginal.
    assert res.sweep.rank_margin.min() > 2.0


def test_path_brackets_decision_changes(n_four_bar):
    """A grid point exactly at the singular configuration: the changes on both sides
    are bracketed to 1e-10, within the rank tolerance's reach of 0."""
    grid = np.linspace(-1.0, 1.0, 11)
    res = jmbs.solvability_path(n_four_bar, lambda th: chain_q(th), grid, method="qr")
    assert [e.kind for e in res.events] == ["change"] * len(res.events) and len(res.events) >= 2
    for e in res.events:
        assert e.s_after - e.s_before <= 1e-10 and abs(e.s) < 1e-7
    assert res.events[0].rank_before == 14 and res.events[-1].rank_after == 14


# ----- report and bad input -----

def test_report_table_and_json(robot):
    rep = jmbs.solvability(robot, method="kinetostatic")
    text = str(rep)
    assert "redundancy p = 2" in text and "W5" in text and "rank" in text.splitlines()[1]
    d = json.loads(rep.to_json())
    assert d["rank"] == 20 and d["redundancy"] == 2 and d["method"] == "kinetostatic"
    el = {e["name"]: e for e in d["elements"]}
    assert el["A"]["unique"] and not el["B"]["unique"] and el["A"]["rank"] == 2
    assert el["B"]["components"]["Fx"]["unique"] is True
    # repr: one line that fits in a container's repr; str: the table.
    assert "\n" not in repr(rep) and repr(rep).startswith("SolvabilityReport(method='kinetostatic'")
    assert "rank=20, redundancy=2" in repr(rep)
    assert rep.verdict("A") == "U" and rep.verdict("B") == "N"
    assert rep.component_verdicts("B").startswith("Fx:U")
    assert rep.null_space().shape == (robot.nc, 2)


def test_bad_input(robot):
    rep = jmbs.solvability(robot)
    with pytest.raises(ValueError, match="unknown element 'Z'"):
        rep.is_unique("Z")
    with pytest.raises(ValueError, match="unknown element 'Z'"):
        rep.is_unique_group(["A", "Z"])
    with pytest.raises(ValueError, match="empty group"):
        rep.is_unique_group([])
    with pytest.raises(ValueError, match="nq = 21"):
        jmbs.solvability(robot, np.zeros(20))
    q = np.array(robot.q0)
    q[4] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        jmbs.solvability(robot, q)
    with pytest.raises(ValueError, match="unknown solvability method 'lu'"):
        jmbs.solvability(robot, method="lu")
    with pytest.raises(ValueError, match=r"shape \(batch, 21\)"):
        jmbs.solvability_sweep(robot, np.zeros(21))
    with pytest.raises(ValueError, match="NaN"):
        jmbs.solvability_sweep(robot, np.stack([q, q]))
    with pytest.raises(ValueError, match="increasing"):
        jmbs.solvability_path(robot, lambda s: robot.q0, [1.0, 0.0])


@pytest.mark.parametrize("name", SOLVABILITY_METHODS)
def test_new_method_tolerances_reuse_the_compiled_programs(name):
    """A method's `rtol` and `ctol` are array leaves (issue 14, item 4): the sweep, the
    decisions and a simulation's reactions with other tolerances trace nothing, and the
    new values take effect (a rank tolerance of 0.7 lowers the parallelogram's rank; a
    criterion tolerance above every criterion makes every reaction unique, except for
    the rank comparison, which has no criterion tolerance)."""
    traces = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, _, **kw: traces.append(event) if event.endswith("jaxpr_trace_duration") else None)
    model = examples.parallelogram()
    qs = np.stack([np.asarray(model.q0)] * 3)
    cls = jmbs.SOLVABILITY_METHODS[name]
    decide = jax.jit(lambda m: jmbs.solvability_decisions(model, model.q0, method=m))

    def run(rtol, ctol):
        method = cls(rtol=rtol, ctol=ctol)
        sweep = jmbs.solvability_sweep(model, qs, method=method, progress=False)
        dec = decide(method)
        sol = jmbs.simulate(model, 0.05, uniqueness=method, saveat=[0.05])
        return (sweep.rank, int(dec.rank), int(sol.reactions.rank[-1]), sweep.is_unique("B0"),
                bool(dec.unique[1]), bool(sol.reactions.is_unique("B0")[-1]))

    # The compiled programs throughout: on the host, a structure switches to its compiled
    # program once its evaluations would have cost what the compilation would, a trace
    # whose moment depends on the structure's earlier uses in this process (the tests
    # before this one), not on the tolerances.
    with host_evaluation(False):
        first = run(1e-8, 1e-6)
        before = len(traces)
        second = run(0.7, 100.0)
    assert len(traces) == before
    assert np.all(first[0] == 11) and first[1] == first[2] == 11
    assert np.all(second[0] < 11) and second[1] < 11 and second[2] < 11
    assert not first[3].any() and not first[4] and not first[5]
    if name != "rank":
        assert second[3].all() and second[4] and second[5]


def test_a_first_report_lowers_a_handful_of_programs():
    """A first `jmbs.solvability` (rank, generic rank from nearby configurations, report)
    lowers its few programs, not one per operation of host-side work (op by op, the
    nearby configurations' units and guesses lowered some 80 programs of one operation
    each, 1.4 s of a first report). A spatial model of a structure no other test builds,
    so that no program is cached in this process."""
    lowered = []

    def count(event, duration, **kwargs):
        if event == "/jax/core/compile/jaxpr_to_mlir_module_duration":
            lowered.append(kwargs.get("fun_name"))

    b = jmbs.ModelBuilder(dim=3, gravity=(0.0, 0.0, -9.81))
    links = [b.add_body(f"first_report_{k}", mass=1.0, inertia=(0.1, 0.2, 0.3),
                        position=(0.5 + k, 0.0, 0.0)) for k in range(3)]
    b.add_revolute("first_report_O", b.ground, links[0], point=(0.0, 0.0, 0.0), axis=(0, 0, 1))
    b.add_universal("first_report_A", links[0], links[1], point=(1.0, 0.0, 0.0),
                    axes=((0, 0, 1), (0, 1, 0)))
    b.add_spherical("first_report_B", links[1], links[2], point=(2.0, 0.0, 0.0))
    model = b.build()
    jax.monitoring.register_event_duration_secs_listener(count)
    try:
        report = jmbs.solvability(model)
        str(report)
    finally:
        jax.monitoring.unregister_event_duration_listener(count)
    assert (report.rank, report.dof) == (5 + 4 + 3, 1 + 2 + 3)  # an open chain: rows independent
    assert len(lowered) <= 15, lowered
