"""The `jmbs` command line checked against the Python API; and the README example.

Most commands run in the test's process through `jmbs.cli.main` (what the `jmbs`
script calls: the same parsing, output, error lines and exit codes), so that they
share the worker's compiled programs; the tests marked "as a user runs it" start
`python -m jmbs.cli` in a process of its own (the entry point, the tracebacks of
--debug, the cache on disk)."""

import contextlib
import dataclasses
import io
import json
import math
import os
import subprocess
import sys

import jax
import numpy as np
import pytest
from typer.testing import CliRunner

import jmbs
from jmbs.cli import app, main


@dataclasses.dataclass
class Completed:
    returncode: int
    stdout: str
    stderr: str


def run(*args, cwd) -> Completed:
    """`jmbs ARGS` in `cwd`, in this process (`jmbs.cli.main`)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return Completed(code, out.getvalue(), err.getvalue())


def run_process(*args, cwd) -> subprocess.CompletedProcess:
    """`python -m jmbs.cli ARGS` in a process of its own, as a user runs it."""
    # The command shares the tests' persistent compilation cache (tests/conftest.py).
    cache = jax.config.jax_compilation_cache_dir
    env = os.environ | ({"JAX_COMPILATION_CACHE_DIR": cache,
                         "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0.5"} if cache
                         else {"JMBS_NO_CACHE": "1"})
    return subprocess.run([sys.executable, "-m", "jmbs.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env=env)


def read_csv(path) -> tuple[list[str], np.ndarray]:
    header = path.read_text().splitlines()[0].split(",")
    return header, np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)


@pytest.fixture(scope="module")
def parallelogram_file(tmp_path_factory):
    """A parallelogram with three cranks, crank 0 driven at 1 rad/s from the vertical: at
    a driver angle of pi/2 it lies flat on the ground line, a singular configuration."""
    b = jmbs.ModelBuilder(dim=2, gravity=(0.0, -9.81))
    for k in range(3):
        b.add_body(f"crank{k}", mass=1.0, inertia=1 / 12, position=(k, 0.5), angle=math.pi / 2)
    b.add_body("coupler", mass=2.0, inertia=2 / 3, position=(1.0, 1.0))
    for k in range(3):
        b.add_revolute(f"O{k}", b.ground, f"crank{k}", point=(k, 0.0))
        b.add_revolute(f"B{k}", f"crank{k}", "coupler", point=(k, 1.0))
    b.add_driver("drive", joint="O0", motion="t")
    return jmbs.save(b.build(), tmp_path_factory.mktemp("models") / "parallelogram3.yaml")


def test_help_of_every_command(tmp_path):
    out = run_process("--help", cwd=tmp_path)  # as a user runs it
    assert out.returncode == 0
    for command in ("analyze", "simulate", "sweep", "demo", "models"):
        assert command in out.stdout
    assert "Exit codes" in out.stdout
    options = {"analyze": ["--at", "--q", "--method", "--json", "--components", "--trusted",
                           "--advise"],
               "simulate": ["--t1", "--formulation", "--stabilization", "--n-saves", "--out",
                            "--plot", "--animate", "--trusted"],
               "sweep": ["--driver", "--range", "--n", "--rank-tol", "--no-plot", "--trusted"],
               "demo": ["--out", "--short"], "models": ["--json"]}
    runner = CliRunner()
    for command, names in options.items():
        res = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
        assert res.exit_code == 0, res.output
        for name in names:
            assert name in res.output, (command, name)
    assert runner.invoke(app, ["--version"]).output.strip() == "jmbs 0.1.0"


def test_analyze_json_agrees_with_the_api(tmp_path):
    out = run("analyze", "gripper_torque", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)  # stdout holds the JSON document only
    model = jmbs.load("gripper_torque")
    rep = jmbs.solvability(model)
    assert doc["model"] == {"name": "gripper_torque", "dim": 2, "bodies": 4, "nq": 12, "nv": 12,
                            "nc": 13, "forces": {}}
    assert (doc["rank"], doc["redundancy"], doc["dof"]) == (rep.rank, rep.redundancy, rep.dof)
    verdicts = {e["name"]: e["unique"] for e in doc["elements"]}
    assert verdicts == {name: rep.is_unique(name) for name in model.element_names}
    # Paper 003, Table 4: the translational joints' reactions are not unique.
    assert [n for n, u in verdicts.items() if not u] == ["Bt", "Ct", "Dt"]
    for e in doc["elements"]:
        got = [c["unique"] for c in e["components"].values()]
        assert got == list(rep.unique_components(e["name"]))


def test_analyze_at_a_time_assembles_the_driven_model(parallelogram_file, tmp_path):
    out = run("analyze", parallelogram_file, "--at", 1.0, "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    model = jmbs.load(parallelogram_file)
    q = np.asarray(jmbs.kinematics(model, np.linspace(0.0, 1.0, 11)).q[-1])
    np.testing.assert_allclose(doc["q"], q, atol=1e-9)
    assert doc["q"][2] == pytest.approx(math.pi / 2 + 1.0)  # crank 0 turned by the driver
    rep = jmbs.solvability(model, q, 1.0)
    assert (doc["rank"], doc["redundancy"], doc["t"]) == (rep.rank, rep.redundancy, 1.0)
    assert {e["name"]: e["unique"] for e in doc["elements"]} == {
        name: rep.is_unique(name) for name in model.element_names}


def test_sweep_locates_the_flat_parallelogram(parallelogram_file, tmp_path):
    out = run("sweep", parallelogram_file, "--driver", "drive", "--range", 1.2, 1.9, "--n", 15,
              "--rank-tol", 1e-6, "--out", "flat", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    # The only event: the mechanism flat on the ground line, where the rank drops by one.
    [event] = doc["events"]
    assert event["kind"] == "singular"
    assert event["s"] == pytest.approx(math.pi / 2, abs=1e-6)
    assert (event["rank_before"], event["rank_at"], event["rank_after"]) == (12, 11, 12)
    assert doc["always_unique"] == ["drive"] and doc["changing"] == []
    header, rows = read_csv(tmp_path / "flat.csv")
    names = jmbs.load(parallelogram_file).element_names
    assert header == ["s", "rank", "p"] + [f"{e}.unique" for e in names]
    assert rows.shape == (15, 3 + len(names))
    np.testing.assert_allclose(rows[:, 0], np.linspace(1.2, 1.9, 15))
    assert (rows[:, 1] == 12).all() and (rows[:, 2] == 1).all()  # the grid misses the singularity
    assert rows[:, 3:].tolist() == [[float(doc["unique"][e][k]) for e in names] for k in range(15)]
    assert (tmp_path / "flat.png").stat().st_size > 0


def test_sweep_of_an_overactuated_model_and_along_time(tmp_path):
    """Moving one drive of the overactuated gripper releases the other (it used to be
    held, lock the mechanism and report a dead centre); without --driver the sweep is
    along time, every driver following its motion."""
    out = run("sweep", "gripper_overactuated", "--driver", "drive_Cr", "--range", -0.1, 0.1,
              "--n", 5, "--json", "--no-plot", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["rank"] == [12] * 5 and doc["events"] == []
    out = run("sweep", "mobile_robot", "--range", 0.0, 0.5, "--n", 5, "--json", "--no-plot",
              cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["driver"] is None and doc["unit"] == "s" and doc["s"] == [0.0, 0.125, 0.25, 0.375, 0.5]
    assert doc["rank"] == [20] * 5


def test_simulate_writes_matching_npz_and_csv(tmp_path):
    out = run("simulate", "slider_crank", "--t1", 0.2, "--n-saves", 5, "--out", "run", "--plot",
              "--animate", "run.gif", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["steps"] > 0 and summary["max_violation"] < 1e-10
    assert summary["always_unique"] == ["O", "A", "B", "P"] and summary["never_unique"] == []
    for name in ("run.npz", "run.csv", "run-reactions.png", "run.gif"):
        assert (tmp_path / name).stat().st_size > 0
    model = jmbs.load("slider_crank")
    data = np.load(tmp_path / "run.npz")
    header, rows = read_csv(tmp_path / "run.csv")
    coords = [f"{b}.{c}" for b in ("crank", "rod", "slider") for c in ("x", "y", "phi")]
    assert header == (["t"] + coords + list(data["component_names"])
                      + [f"{e}.unique" for e in model.element_names])
    assert list(data["component_names"]) == ["O.Fx", "O.Fy", "A.Fx", "A.Fy", "B.Fx", "B.Fy",
                                             "P.Fn", "P.M"]
    np.testing.assert_allclose(rows[:, 0], np.linspace(0.0, 0.2, 5))
    np.testing.assert_allclose(rows[0, 1:10], model.q0, atol=1e-12)
    np.testing.assert_array_equal(rows[:, 1:10], data["q"])
    np.testing.assert_array_equal(rows[:, 10:18], -data["multipliers"])  # reaction components
    np.testing.assert_array_equal(rows[:, 18:], data["unique"])
    assert data["v"].shape == data["v_dot"].shape == (5, 9) and data["energy"].shape == (5,)


@pytest.mark.parametrize("args, code, expected", [
    (["analyze", "no_such_model"], 3, ["'no_such_model' is neither a model file nor a bundled"]),
    (["analyze", "bad.yaml"], 3, ["bad.yaml:", "invalid YAML"]),
    (["analyze", "slider_crank", "--q", "short.txt"], 3, ["short.txt: 3 numbers", "nq = 9"]),
    (["--debug", "analyze", "missing.yaml"], 3, ["missing.yaml: no such file"]),
    (["simulate", "slider_crank", "--t1", "-1"], 2, ["Invalid value for --t1: must be positive"]),
])
def test_errors_are_one_line_with_an_exit_code(args, code, expected, tmp_path):
    (tmp_path / "bad.yaml").write_text("dim: 2\nbodies: [\n")
    (tmp_path / "short.txt").write_text("1, 2, 3\n")
    # --debug's traceback as a user sees it; the other errors from main in-process
    out = (run_process if "--debug" in args else run)(*args, cwd=tmp_path)
    assert out.returncode == code, out.stderr
    assert ("Traceback" in out.stderr) == ("--debug" in args)
    lines = out.stderr.strip().splitlines()
    if code == 2:  # typer's usage error
        assert all(text in out.stderr for text in expected)
        return
    # One line (the last, after the traceback with --debug) names the problem.
    assert len(lines) == 1 or "--debug" in args
    assert lines[-1].startswith("error: ") and all(text in lines[-1] for text in expected)


def test_function_references_need_trusted(tmp_path):
    """A model file naming `module:function` is refused without --trusted (the module's
    top-level code does not run) and analysed with it; as a user runs it (the model's
    directory is on the path of `python -m`)."""
    marker = tmp_path / "imported.txt"
    (tmp_path / "my_motions.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n"
        "def spin(t):\n    return 2.0 * t\n")
    (tmp_path / "m.yaml").write_text(
        "dim: 2\nbodies:\n  a: {mass: 1.0, inertia: 1.0, position: [0.5, 0]}\nelements:\n"
        "  J: {type: revolute, bodies: [ground, a], point: [0, 0]}\n"
        "  d: {type: driver, joint: J, motion: 'my_motions:spin'}\n")
    out = run_process("analyze", "m.yaml", cwd=tmp_path)
    assert out.returncode == 3 and "--trusted" in out.stderr and not marker.exists(), out.stderr
    out = run_process("analyze", "m.yaml", "--trusted", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert marker.exists() and json.loads(out.stdout)["dof"] == 0


def test_a_model_with_force_elements_from_the_command_line(tmp_path):
    """Andrews' squeezer (a spring and a torque): analyze lists the force elements, simulate
    reports the energy balance with their work (E - W stays constant) and saves W."""
    out = run("analyze", "andrews_squeezer", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["model"]["forces"] == {"spring": "spring_damper", "mom": "torque"}
    out = run("simulate", "andrews_squeezer", "--t1", "0.005", "--out", "run", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    data = np.load(tmp_path / "run.npz")
    balance = data["energy"] - data["work"]
    assert doc["energy_drift"] == pytest.approx(np.abs(balance - balance[0]).max())
    assert doc["energy_drift"] < 1e-6 * abs(data["energy"][0]) and doc["work"] > 0.0


def test_compiled_programs_are_kept_on_disk_for_the_next_command(tmp_path):
    """The command line keeps its compiled programs (jmbs.enable_compilation_cache): a
    second identical command compiles nothing new (every program is a cache hit: no
    host callback keeps one out), and --no-cache leaves the directory alone."""
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "JMBS_"))}
    env["JMBS_CACHE_DIR"] = str(cache)

    def jmbs_cli(*args):
        out = subprocess.run([sys.executable, "-m", "jmbs.cli", *args], cwd=tmp_path,
                             capture_output=True, text=True, env=env)
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout

    first = jmbs_cli("analyze", "four_bar")
    entries = sorted(p.name for p in cache.glob("*-cache"))
    assert entries  # the programs that run once are evaluated on the host, not compiled
    assert jmbs_cli("analyze", "four_bar") == first
    assert sorted(p.name for p in cache.glob("*-cache")) == entries
    env["JMBS_CACHE_DIR"] = str(tmp_path / "unused")
    jmbs_cli("--no-cache", "analyze", "pendulum")
    assert not (tmp_path / "unused").exists()


PENDULUM_WITH_ROD = """jmbs: 1
dim: 2
gravity: [0.0, -9.81]
bodies:
  rod: {mass: 1.0, inertia: 0.1, position: [0.5, 0.0]}
elements:
  O: {type: revolute, bodies: [ground, rod], point: [0.0, 0.0]}
  L: {type: distance, bodies: [ground, rod], point_i: [0.0, 0.0], point_j: [1.0, 0.0]}
"""


def test_analyze_advise_prints_sentences_and_json(tmp_path):
    """A pendulum held also by a rod from its pivot: p = 1; the advice names what to
    replace, and the JSON carries the same releases."""
    path = tmp_path / "pendulum_rod.yaml"
    path.write_text(PENDULUM_WITH_ROD)
    runner = CliRunner()
    res = runner.invoke(app, ["analyze", str(path), "--advise"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "How to make it statically determinate" in res.output and "p = 1" in res.output
    assert "1. replace " in res.output and ": releases " in res.output
    res = runner.invoke(app, ["analyze", str(path), "--advise", "--json"])
    assert res.exit_code == 0, res.output
    advice = json.loads(res.output)["advice"]
    assert advice["redundancy"] == 1 and advice["releases"]
    expected = jmbs.advise(jmbs.load(path))
    assert [r["components"] for r in advice["releases"]] == [list(r.components) for r in expected]
    for r in advice["releases"]:
        assert len(r["components"]) == 1 and r["checks"]["redundancy"] == 0
