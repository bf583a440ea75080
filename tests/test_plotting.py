"""jmbs.plotting: the drawn content against independent facts (joint coordinates of the
examples, the solvability decisions), and bad input."""

import dataclasses
import math

import matplotlib

matplotlib.use("Agg")

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from helpers import add_pair, random_state  # noqa: E402
from matplotlib import animation  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from PIL import Image  # noqa: E402

import jmbs  # noqa: E402
import jmbs.plotting as jp  # noqa: E402
from jmbs import examples  # noqa: E402
from jmbs.plotting.base import NONUNIQUE, UNIQUE, Layout  # noqa: E402
from jmbs.plotting.mechanism import draw  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def parallelogram():
    return examples.parallelogram()


@pytest.fixture(scope="module")
def parallelogram_report(parallelogram):
    return jmbs.solvability(parallelogram)


@pytest.fixture(scope="module")
def parallelogram_run(parallelogram):
    return jmbs.simulate(parallelogram, 0.2, saveat=jnp.linspace(0.0, 0.2, 5))


def _parallelogram_q(th: float) -> np.ndarray:
    """The parallelogram with its cranks at angle `th` (pi / 2: the reference)."""
    cranks = [[k + 0.5 * math.cos(th), 0.5 * math.sin(th), th] for k in range(3)]
    return np.array(sum(cranks + [[1 + math.cos(th), math.sin(th), 0.0]], []))


def _markers(ax) -> dict:
    """Element name -> its marker line."""
    return {line.get_gid().removeprefix("element:"): line for line in ax.get_lines()
            if (line.get_gid() or "").startswith("element:")}


def _position(line) -> np.ndarray:
    data = line.get_data_3d() if hasattr(line, "get_data_3d") else line.get_data()
    return np.array([np.ravel(x)[0] for x in data])


def _fill(line) -> tuple[str, ...]:
    """The marker's fill: one colour, or (left, right) for a half-filled marker."""
    face = to_hex(line.get_markerfacecolor())
    if line.get_fillstyle() == "full":
        return (face,)
    return face, to_hex(line.get_markerfacecoloralt())


def _expected_fill(report, name) -> tuple[str, ...]:
    if report.is_unique(name):
        return (UNIQUE,)
    return (UNIQUE, NONUNIQUE) if report.unique_components(name).any() else (NONUNIQUE,)


# ----- plot_mechanism -----

def test_parallelogram_markers_sit_on_the_joints_coloured_by_the_report(parallelogram,
                                                                         parallelogram_report):
    rep = parallelogram_report
    assert rep.redundancy == 1
    ax = jp.plot_mechanism(parallelogram, report=rep)
    markers = _markers(ax)
    assert set(markers) == set(parallelogram.element_names)
    for k in range(3):
        np.testing.assert_allclose(_position(markers[f"O{k}"]), [k, 0.0], atol=1e-12)
        np.testing.assert_allclose(_position(markers[f"B{k}"]), [k, 1.0], atol=1e-12)
    for name, line in markers.items():
        # p = 1: every pin's reaction is indeterminate, only its horizontal component is not.
        assert not rep.is_unique(name)
        np.testing.assert_array_equal(rep.unique_components(name), [True, False])
        assert _fill(line) == (UNIQUE, NONUNIQUE)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["unique reaction", "partly unique (some components)", "not unique"]
    grounds = {line.get_gid() for line in ax.get_lines() if (line.get_gid() or "").startswith("ground:")}
    assert grounds == {"ground:O0", "ground:O1", "ground:O2"}
    assert ax.get_aspect() == 1.0
    assert "p = 1" in ax.get_title()


def test_markers_follow_the_configuration(parallelogram):
    """At crank angle th the pins are at (k, 0) and (k + cos th, sin th); the default
    report is computed at that q."""
    th = 0.3
    q = _parallelogram_q(th)
    ax = jp.plot_mechanism(parallelogram, q)
    markers = _markers(ax)
    for k in range(3):
        np.testing.assert_allclose(_position(markers[f"O{k}"]), [k, 0.0], atol=1e-12)
        np.testing.assert_allclose(_position(markers[f"B{k}"]),
                                   [k + math.cos(th), math.sin(th)], atol=1e-12)
        tip = parallelogram.point(q, f"crank{k}", jnp.array([0.5, 0.0]))
        np.testing.assert_allclose(_position(markers[f"B{k}"]), tip, atol=1e-12)
    rep = jmbs.solvability(parallelogram, q)
    for name, line in markers.items():
        assert _fill(line) == _expected_fill(rep, name)


def test_slider_crank_all_unique_and_the_driver_beside_its_joint():
    model = examples.slider_crank(omega=2.0)
    rep = jmbs.solvability(model)
    assert all(rep.is_unique(n) for n in model.element_names)
    ax = jp.plot_mechanism(model, report=rep, labels=False)
    markers = _markers(ax)
    assert all(_fill(line) == (UNIQUE,) for line in markers.values())
    assert markers["drive"].get_marker() == "D" and markers["O"].get_marker() == "o"
    A = 0.5 * np.array([math.cos(math.pi / 6), math.sin(math.pi / 6)])
    xb, _ = examples.slider_crank_position(math.pi / 6)
    np.testing.assert_allclose(_position(markers["O"]), [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(_position(markers["A"]), A, atol=1e-12)
    np.testing.assert_allclose(_position(markers["B"]), [float(xb), 0.0], atol=1e-12)
    # The driver shares O's point and the prismatic joint B's: both are moved aside,
    # near enough to read as theirs.
    for moved, home in (("drive", [0.0, 0.0]), ("P", [float(xb), 0.0])):
        d = np.linalg.norm(_position(markers[moved]) - home)
        assert 0.05 < d < 0.3
    assert not ax.texts  # labels=False


def test_spatial_model_on_3d_axes_with_equal_box_aspect():
    model = examples.spatial_four_bar()
    ax = jp.plot_mechanism(model)
    assert ax.name == "3d"
    markers = _markers(ax)
    assert len(markers) == 4
    A, B = examples.four_bar_points(math.pi / 3)
    expected = {"O2": [0, 0, 0], "A": [*A, 0], "B": [*B, 0], "O4": [3, 0, 0]}
    rep = jmbs.solvability(model)
    for name, p in expected.items():
        np.testing.assert_allclose(_position(markers[name]), p, atol=1e-12)
        assert _fill(markers[name]) == _expected_fill(rep, name)
    widths = np.array([np.ptp(ax.get_xlim()), np.ptp(ax.get_ylim()), np.ptp(ax.get_zlim())])
    aspect = np.asarray(ax.get_box_aspect())
    np.testing.assert_allclose(aspect / aspect[0], widths / widths[0], rtol=1e-6)
    with pytest.raises(ValueError, match="3-D axes"):
        jp.plot_mechanism(model, report=rep, ax=plt.figure().add_subplot())


def test_geometry_of_every_kind_of_element_at_a_random_configuration():
    """Element points from the parameters (NumPy) against `Model.point` (JAX) with the
    body-frame points from the builder's global reference points."""
    b = jmbs.ModelBuilder(dim=3, gravity=(0.0, 0.0, -9.81))
    # (every joint with a point shares the revolute's code; a model of many kinds is slow to build)
    kinds = ["revolute+driver", "distance", "cylindrical+slide", "holonomic"]
    for k, kind in enumerate(kinds):
        add_pair(b, 3, kind, ground=k % 2 == 1, prefix=f"k{k}", offset=2.0 * k)
    model = b.build(check=False)
    q, _, _ = random_state(model, 0, 0.2)
    layout = Layout(model)
    scene = layout.scene(q)
    params = model.params()
    q0 = model.q0  # the reference poses (built without assembling)

    def on(body, p):
        """Global position at q of the body point that was at `p` in the reference."""
        if body == "ground":
            return np.asarray(p)
        ref = model.body_q(q0, body)
        R0 = np.asarray(jmbs.rotations.quat_to_rot(ref[3:]))
        return np.asarray(model.point(q, body, R0.T @ (np.asarray(p) - np.asarray(ref[:3]))))

    for name in model.element_names:
        info = model.element(name)
        if info.kind == "driver":
            expected = scene.points[name.replace("D", "J")]  # its joint's
        elif info.kind == "distance":
            ends = [on(body, params[f"{name}.{key}"])
                    for body, key in zip(info.bodies, ("point_i", "point_j"))]
            np.testing.assert_allclose(scene.rods[name], ends, atol=1e-12)
            expected = np.mean(ends, axis=0)
        elif info.kind == "holonomic":
            expected = np.mean([model.body_q(q, b_)[:3] for b_ in info.bodies if b_ != "ground"], axis=0)
        else:
            expected = on(info.bodies[1], params[f"{name}.point"])
        np.testing.assert_allclose(scene.points[name], expected, atol=1e-12, err_msg=name)
        grounded = "ground" in info.bodies and info.kind not in ("driver", "holonomic")
        assert (name in scene.grounds) == grounded
    # Each body outline holds its own element points (and its centre of mass).
    for body in model.body_names:
        outline = scene.outlines[body]
        for name in model.element_names:
            info = model.element(name)
            if body in info.bodies and info.kind in ("revolute", "cylindrical"):
                p = on(body, params[f"{name}.point"])
                assert np.min(np.linalg.norm(outline - p, axis=1)) < 1e-12
    # Drawn on 3-D axes without a report: every element gets its marker.
    ax = plt.figure().add_subplot(projection="3d")
    draw(ax, layout, scene, dict.fromkeys(model.element_names, "unique"))
    assert set(_markers(ax)) == set(model.element_names)


def test_plot_mechanism_bad_input(parallelogram, parallelogram_report):
    with pytest.raises(ValueError, match="nq = 12"):
        jp.plot_mechanism(parallelogram, np.zeros(5), report=parallelogram_report)
    with pytest.raises(ValueError, match="another configuration"):
        jp.plot_mechanism(parallelogram, _parallelogram_q(0.3), report=parallelogram_report)
    with pytest.raises(ValueError, match="another model"):
        jp.plot_mechanism(examples.four_bar(), report=parallelogram_report)


# ----- plot_reactions -----

def test_reactions_non_unique_dashed_and_labelled(parallelogram_run):
    sol = parallelogram_run
    fig = jp.plot_reactions(sol, ["O0", "B1"])
    assert len(fig.axes) == 2
    for ax, name in zip(fig.axes, ["O0", "B1"]):
        lines = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
        assert [line.get_label() for line in lines] == ["Fx (not unique)", "Fy (not unique)"]
        assert all(line.get_linestyle() == "--" for line in lines)
        np.testing.assert_allclose(lines[1].get_ydata(), sol.reactions.force(name)[:, 1])
        np.testing.assert_allclose(lines[0].get_xdata(), sol.ts)
        assert not ax.patches  # uniqueness does not change: nothing shaded
        assert ax.get_ylabel() == "force [N]"
    assert fig.axes[-1].get_xlabel() == "t [s]" and "dashed: not unique" in fig._suptitle.get_text()


def test_drawn_points_are_the_reaction_points(parallelogram, parallelogram_run):
    layout = Layout(parallelogram)
    for k, q in enumerate(np.asarray(parallelogram_run.q)):
        scene = layout.scene(q)
        for name in parallelogram.element_names:
            np.testing.assert_allclose(scene.points[name], parallelogram_run.reactions.point(name)[k],
                                       atol=1e-12)


def test_reactions_components_each_with_its_own_uniqueness(parallelogram_run):
    fig = jp.plot_reactions(parallelogram_run, "O1", kind="components")
    (ax,) = fig.axes
    fx, fy = ax.get_lines()
    assert (fx.get_label(), fx.get_linestyle()) == ("Fx", "-")
    assert (fy.get_label(), fy.get_linestyle()) == ("Fy (not unique)", "--")


def test_reactions_shade_where_uniqueness_changes(parallelogram_run):
    """A run whose reaction O0 is unique at the first two saved times only."""
    sol = parallelogram_run
    unique = np.asarray(sol.reactions.unique).copy()
    unique[:2, 0] = True
    sol = eqx.tree_at(lambda s: s.reactions.unique, sol, jnp.asarray(unique))
    fig = jp.plot_reactions(sol, ["O0"])
    (ax,) = fig.axes
    solid = [line for line in ax.get_lines() if line.get_linestyle() == "-"]
    assert solid[0].get_label() == "Fx (not unique where shaded)"
    np.testing.assert_array_equal(np.isfinite(solid[0].get_ydata()), [True, True, False, False, False])
    (span,) = ax.patches
    x = span.get_patch_transform().transform(span.get_path().vertices)[:, 0]
    ts = np.asarray(sol.ts)
    np.testing.assert_allclose([x.min(), x.max()], [(ts[1] + ts[2]) / 2, ts[-1]])
    assert "not unique" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_plot_reactions_bad_input(parallelogram_run):
    with pytest.raises(ValueError, match="unknown element 'X'"):
        jp.plot_reactions(parallelogram_run, ["X"])
    with pytest.raises(ValueError, match="kind must be one of"):
        jp.plot_reactions(parallelogram_run, kind="power")
    with pytest.raises(ValueError, match="no element has a torque"):
        jp.plot_reactions(parallelogram_run, kind="torque")
    with pytest.raises(ValueError, match="reactions=True"):
        jp.plot_reactions(dataclasses.replace(parallelogram_run, reactions=None))


# ----- plot_sweep -----

def test_sweep_path_rank_map_and_singular_event(parallelogram):
    """The parallelogram lies flat at angle 0: the rank drops from 11 to 10 there."""
    grid = np.linspace(-0.95, 1.3, 12)
    path = jmbs.solvability_path(parallelogram, _parallelogram_q, grid)
    (event,) = path.events
    assert event.kind == "singular" and abs(event.s) < 1e-9
    fig = jp.plot_sweep(path, xlabel="crank angle")
    top, middle, bottom = fig.axes[:3]
    step = top.get_lines()[0]
    np.testing.assert_array_equal(np.unique(step.get_ydata()), [11])
    assert any(t.get_text() == "singular (rank 10)" for t in top.texts)
    for ax in (top, middle, bottom):  # the event is a vertical line in every panel
        assert any(np.allclose(line.get_xdata(), event.s) for line in ax.get_lines())
    names = [t.get_text() for t in middle.get_yticklabels()]
    assert names == list(parallelogram.element_names)[::-1]
    sweep = path.sweep
    for name in parallelogram.element_names:
        colours = {to_hex(c) for coll in middle.collections if coll.get_gid() == f"band:{name}"
                   for c in coll.get_facecolor()}
        # green where unique, orange where not, both where only some components are
        some = sweep.unique_components(name).any(axis=1)
        expected = ({UNIQUE} if some.any() else set()) | ({NONUNIQUE} if (~sweep.is_unique(name)).any()
                                                          else set())
        assert colours == expected
    assert bottom.get_xlabel() == "crank angle"


def test_sweep_without_s_and_bad_input(parallelogram):
    # 12 configurations, like the path's grid above: the compiled sweep is reused.
    qs = np.stack([_parallelogram_q(th) for th in np.linspace(0.5, math.pi / 2, 12)])
    sweep = jmbs.solvability_sweep(parallelogram, qs)
    fig = jp.plot_sweep(sweep)
    np.testing.assert_array_equal(fig.axes[0].get_lines()[0].get_xdata(), np.arange(12))
    # Cranks upright at the last configuration: the horizontal pin forces are unique
    # there, so the bands turn half green.
    assert sweep.unique_components("O0")[-1].tolist() == [True, False]
    assert sweep.unique_components("O0")[0].tolist() == [False, False]
    colours = {to_hex(c) for coll in fig.axes[1].collections if coll.get_gid() == "band:O0"
               for c in coll.get_facecolor()}
    assert colours == {UNIQUE, NONUNIQUE}
    # The rank is constant (11): one integer tick on each side, not fractional ones.
    lo, hi = fig.axes[0].get_ylim()
    assert [t for t in fig.axes[0].get_yticks() if lo <= t <= hi] == [11.0]
    with pytest.raises(ValueError, match="12 configurations"):
        jp.plot_sweep(sweep, s=np.arange(4))
    with pytest.raises(ValueError, match="solvability_sweep"):
        jp.plot_sweep(np.zeros(3))


# ----- animate -----

def test_animate_writes_a_gif_with_one_frame_per_drawn_state(parallelogram, parallelogram_run, tmp_path):
    out = jp.animate(parallelogram, parallelogram_run, tmp_path / "run.gif", every=2, dpi=40)
    assert out == tmp_path / "run.gif"
    with Image.open(out) as im:
        assert im.n_frames == 3  # saved states 0, 2, 4


def test_animate_bad_input(parallelogram, parallelogram_run, tmp_path):
    with pytest.raises(ValueError, match=r"\.gif or \.mp4"):
        jp.animate(parallelogram, parallelogram_run, tmp_path / "run.avi")
    with pytest.raises(ValueError, match="solution.q"):
        jp.animate(examples.four_bar(), parallelogram_run, tmp_path / "run.gif")
    with pytest.raises(ValueError, match="the arguments may be swapped: the model comes first"):
        jp.animate(parallelogram_run, parallelogram, tmp_path / "run.gif")
    with pytest.raises(ValueError, match="must be a jmbs.Solution"):
        jp.animate(parallelogram, parallelogram.q0, tmp_path / "run.gif")
    if not animation.writers.is_available("ffmpeg"):
        with pytest.raises(RuntimeError, match=r"write a \.gif instead"):
            jp.animate(parallelogram, parallelogram_run, tmp_path / "run.mp4")



def test_force_elements_are_drawn_where_they_act():
    """A spring is a zig-zag between its two points (at the current configuration), a
    constant force an arrow ending at its point along the force, the other force
    elements a marker at their point; the legend names their kinds."""
    b = jmbs.ModelBuilder(dim=2, gravity=(0.0, -9.81))
    b.add_body("a", 1.0, 0.1, (0.5, 0.0))
    b.add_revolute("R", "ground", "a", (0.0, 0.0))
    b.add_spring_damper("S", "ground", "a", (1.0, 1.0), (1.0, 0.0), stiffness=30.0)
    b.add_force("F", "a", (0.0, -2.0), point=(1.0, 0.0), frame="body")
    b.add_rotational_spring_damper("K", "R", stiffness=5.0)
    model = b.build()
    q = np.asarray(model.q0).copy()
    q[2] = math.pi / 2  # turned up: the body's tip at (0.5, 0.5) from its centre at (0, 0.5)
    q[:2] = (0.0, 0.5)
    ax = jp.plot_mechanism(model, q, labels=False)
    artists = {a.get_gid(): a for a in [*ax.get_lines(), *ax.texts]
               if (a.get_gid() or "").startswith("force:")}
    spring = np.asarray(artists["force:S"].get_xydata())
    np.testing.assert_allclose(spring[0], (1.0, 1.0), atol=1e-12)
    np.testing.assert_allclose(spring[-1], (0.0, 1.0), atol=1e-12)  # the tip, turned with the body
    assert len(spring) > 10  # zig-zags
    arrow = artists["force:F"]  # an annotation: head at the point, tail against the force
    np.testing.assert_allclose(arrow.xy, (0.0, 1.0), atol=1e-12)
    tail = np.asarray(arrow.xyann) - np.asarray(arrow.xy)
    assert tail[0] < 0 and abs(tail[1]) < 1e-12  # the body-frame (0, -2) turned to (2, 0)
    np.testing.assert_allclose(artists["force:K"].get_xydata()[0], (0.0, 0.0), atol=1e-12)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"spring-damper", "applied force", "rotational spring-damper"} <= set(labels)
    plt.close(ax.figure)
