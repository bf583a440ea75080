"""`jmbs demo` in its short mode: the report, its figures, its checks, and a few of its
numbers recomputed independently. An end-to-end run like the experiments' (a subprocess
of about a minute of a cold worker's time), so `make experiments` runs it, after the
suite in CI; the suite checks the library's side of the papers' numbers
(tests/test_solvability_papers.py, test_stepper.py, test_dynamics.py, test_andrews.py)."""

import json
import os
import re
import subprocess
import sys

import jax
import pytest

import jmbs

pytestmark = pytest.mark.experiment

# Checks per section in the short mode (the full mode adds three on the Bricard's swing).
N_CHECKS = {
    "Mobile robot with a trolley": 26,
    "Planar gripper: Tables 2, 4 and 6": 27,
    "Spatial parallelogram with a triple pendulum": 18,
    "Redundant manipulator: Tables 8 and 10": 32,
    "Parallelogram and Bricard mechanism: one redundancy shared by a loop": 11,
    "Bricard mechanism with paper 002's fixed-step stepper": 9,
    "Driven slider-crank: kinematics against the closed form": 4,
    "Andrews' squeezing mechanism: the test set's reference solution": 3,
}

# Pękal & Frączek (papers/003), Tab. 4: the gripper with a torque drive in Cr, A 12 x 13 of rank 12.
TAB4 = {"Bt": "N", "Ct": "N", "Dt": "N", "Br": "U", "Cr": "U", "Er": "U", "drive_Cr": "U"}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """`jmbs demo --short` run as a user runs it (exit code 0: every check passed)."""
    out = tmp_path_factory.mktemp("demo")
    cache = jax.config.jax_compilation_cache_dir  # shared with the tests (conftest.py)
    env = os.environ | ({"JAX_COMPILATION_CACHE_DIR": cache,
                         "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0.5"} if cache
                         else {"JMBS_NO_CACHE": "1"})
    res = subprocess.run([sys.executable, "-m", "jmbs.cli", "demo", "--short", "--out", str(out)],
                         capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.splitlines() == [f"report: {out / 'report.md'}",
                                       "every check agrees with the papers"]
    return out / "report.md", json.loads((out / "results.json").read_text())


def section(results: dict, title: str) -> dict:
    return next(s for s in results["sections"] if s["title"] == title)


def test_report_links_exactly_the_figures(demo):
    report, _ = demo
    assert report.name == "report.md"
    text = report.read_text()
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(links) == len(set(links)) >= 8
    for link in links:
        assert (report.parent / link).stat().st_size > 10_000, link
    written = {p.relative_to(report.parent).as_posix() for p in (report.parent / "figures").iterdir()}
    assert written == set(links)
    assert "❌" not in text


def test_every_check_passes(demo):
    _, res = demo
    assert res["all_passed"] and res["short"]
    assert {s["title"]: s["total"] for s in res["sections"]} == N_CHECKS
    assert res["n_checks"] == res["n_passed"] == sum(N_CHECKS.values())
    for s in res["sections"]:
        assert s["passed"] == s["total"], [c for c in s["checks"] if not c["passed"]]
        assert all(set(c) == {"name", "expected", "obtained", "passed"} for c in s["checks"])


def test_gripper_torque_table(demo):
    """Tab. 4 again, with the default (null-space) method instead of the kinetostatic one."""
    _, res = demo
    rep = jmbs.solvability(jmbs.examples.gripper("torque"))
    assert {el: "U" if rep.is_unique(el) else "N" for el in TAB4} == TAB4
    got = section(res, "Planar gripper: Tables 2, 4 and 6")["results"]["gripper_torque"]
    assert (got["shape"], got["rank"]) == ([12, 13], 12)
    assert {el: got["elements"][el]["verdict"] for el in TAB4} == TAB4


def test_mobile_robot_ranks(demo):
    """Paper 000: r = 20, p = 2, here from the bundled model with its default driver."""
    _, res = demo
    rep = jmbs.solvability(jmbs.examples.mobile_robot())
    assert (rep.rank, rep.redundancy) == (20, 2)
    got = section(res, "Mobile robot with a trolley")["results"]
    assert (got["reference"]["r"], got["reference"]["p"]) == (rep.rank, rep.redundancy)
    assert set(got["sweep_ranks"]["p"]) == {2} and len(got["sweep_ranks"]["p"]) == 9
    assert got["unique"] == {el: rep.is_unique(el) for el in rep.model.element_names}
