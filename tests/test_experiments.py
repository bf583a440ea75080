"""The experiments run end to end in a short mode: `make experiments`, which CI runs after
the suite (they are not part of `make test`). The suite checks the library's side of what
they reproduce (the papers' tables in test_solvability_papers.py, the
stepper's locking in test_stepper.py, the Bricard and Andrews' squeezer in
test_dynamics.py and test_andrews.py, gradients through simulation in
test_sensitivity.py); what only an experiment checks (the bushings' 1/k approach, the
design loop, the figures) is checked here, and the demo's report in test_demo.py."""

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.experiment

ROOT = Path(__file__).resolve().parents[1]


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_slider_crank_kinematics(tmp_path):
    errors = _load("slider_crank_kinematics").main(short=True, out=tmp_path)
    assert errors["x"] < 1e-10 and errors["v"] < 1e-9 and errors["a"] < 1e-8
    assert (tmp_path / "slider_crank_kinematics.png").stat().st_size > 10_000


def test_solvability_mobile_robot(tmp_path):
    res = _load("solvability_mobile_robot").main(short=True, out=tmp_path)
    ranks = {"rank(Phi_q)": 17, "rank(Psi)": 4, "r": 20, "p": 2}
    assert res["reference"] == ranks
    assert res["manoeuvre"] == res["random"] == {k: [v] for k, v in ranks.items()}
    assert res["unique"] == {**{k: True for k in ("A", "D", "E", "F", "G", "H", "drive", "W5")},
                             **{k: False for k in ("B", "C", "W1", "W2", "W3", "W4")}}
    assert res["matches"] and res["pattern_manoeuvre"] and res["pattern_random"]
    assert res["methods_agree_reference"] and res["methods_agree_manoeuvre"] and res["methods_agree_random"]
    assert (tmp_path / "solvability_mobile_robot.json").exists()


def test_solvability_gripper(tmp_path):
    res = _load("solvability_gripper").main(short=True, out=tmp_path)
    expected = {"gripper": ([12, 12], 11, "Br Cr Er"), "gripper_torque": ([12, 13], 12, "Br Cr Er drive_Cr"),
                "gripper_overactuated": ([12, 14], 12, "")}
    for name, (shape, rank, unique) in expected.items():
        r = res[name]
        assert (r["shape"], r["rank"]) == (shape, rank), name
        assert {k for k, u in r["unique"].items() if u} == set(unique.split()), name
        assert all(v == (1 if k.startswith("drive") else 2) for k, v in r["set_rank"].items()), name
        assert r["matches"] and r["methods_agree_reference"] and r["methods_agree_sweep"], name
        assert r["pattern_everywhere"] and r["sweep_ranks"] == {m: [rank] for m in r["sweep_ranks"]}, name
    # At the dead point of the Bt drive (the common slide stationary) the Cr torque is
    # unique, with the rank unchanged.
    over = res["gripper_overactuated"]
    assert abs(over["dead_point_t"] + 0.0973) < 1e-3 and over["dead_point_rank"] == 12
    assert {k for k, u in over["dead_point_unique"].items() if u} == {"drive_Cr"}
    assert over["dead_point_methods_agree"]
    assert (tmp_path / "solvability_gripper.txt").exists()


def test_solvability_manipulator(tmp_path):
    res = _load("solvability_manipulator").main(short=True, out=tmp_path)
    expected = {"redundant_manipulator": ([42, 46], 42, "A dA dHc dIc"),
                "redundant_manipulator_overactuated": ([54, 61], 54, "A dA dIc")}
    for name, (shape, rank, unique) in expected.items():
        r = res[name]
        assert (r["shape"], r["rank"]) == (shape, rank), name
        assert {k for k, u in r["unique"].items() if u} == set(unique.split()), name
        full = {k: 1 if k.startswith("d") else 4 if k.endswith("c") else 5 for k in r["set_rank"]}
        assert r["set_rank"] == full, name
        assert r["matches"] and r["methods_agree_reference"] and r["methods_agree_sweep"], name
        assert r["pattern_everywhere"] and r["sweep_ranks"] == {m: [rank] for m in r["sweep_ranks"]}, name


def test_solvability_spatial_parallelogram(tmp_path):
    res = _load("solvability_spatial_parallelogram").main(short=True, out=tmp_path)
    assert res["ground_matrix_shape"] == [18, 18] and res["ground_matrix_rank"] == 17
    assert (res["rank_C"], res["rank_C_internal"]) == (44, 27)
    assert res["ground_matrix_rank_sweep"] == [17]
    assert (res["rank"], res["redundancy"]) == (44, 1)
    assert {k for k, u in res["unique"].items() if u} == set("KLMNPQR")
    assert res["matches"] and res["pattern_everywhere"] and res["sweep_ranks"] == [44]
    assert res["methods_agree_reference"] and res["methods_agree_sweep"]
    assert not res["ground_group_unique"] and res["ground_resultant_criterion"] < 1e-12
    assert res["ground_resultant_api"][0] and res["ground_resultant_api"][1] < 1e-12


def test_solvability_parallelogram_bricard(tmp_path):
    res = _load("solvability_parallelogram_bricard").main(short=True, out=tmp_path)
    par, bri = res["parallelogram"], res["bricard"]
    assert (par["rank"], par["redundancy"]) == (11, 1) and not any(par["unique"].values())
    assert all(c == [True, False] for c in par["components_reference"].values())  # Fx U, Fy N
    assert par["self_stress_residual"] < 1e-13 and par["self_stress_alignment"] > 1 - 1e-12
    assert par["components_match_self_stress"] and par["none_unique_anywhere"]
    assert (bri["rank"], bri["redundancy"], bri["dof"]) == (29, 1, 1) and not any(bri["unique"].values())
    assert bri["none_unique_anywhere"]
    for r in (par, bri):
        assert r["methods_agree_reference"] and r["methods_agree_sweep"]
        assert r["sweep_ranks"] == [r["rank"]]


def test_dynamics_bricard(tmp_path):
    res = _load("dynamics_bricard").main(short=True, out=tmp_path)["runs"]
    proj = res["Projection"]
    assert abs(proj["t_min"] - 2.5) < 0.02 and abs(proj["x_min"] + 1) < 1e-4
    assert abs(proj["t_return"] - 5.0) < 0.05 and proj["max_violation"] < 1e-10
    locked = res["paper's stepper, rank per step"]  # the locking of paper 002: it stops short
    assert locked["x_range"][0] > -0.5 and res["paper's stepper, rank fixed"]["x_min"] < -0.99
    assert res["Baumgarte"]["moves"] and res["Penalty"]["moves"]
    assert (tmp_path / "dynamics_bricard.png").stat().st_size > 10_000


def test_dynamics_mobile_robot(tmp_path):
    res = _load("dynamics_mobile_robot").main(short=True, out=tmp_path)
    assert res["max_motion_difference"] <= 1e-8 and res["consistent"]
    for name, r in res["reactions"].items():
        assert r["unique"] == r["paper_unique"] and r["flags_agree"], name
        assert r["same"] == r["unique"], name
    assert (tmp_path / "dynamics_mobile_robot_reactions.png").stat().st_size > 10_000


def test_design_mobile_robot(tmp_path):
    res = _load("design_mobile_robot").main(short=True, out=tmp_path)
    assert res["final"] < res["initial"] and res["verified_final"] < res["verified_initial"]
    # the optimiser's values (constant steps) and the adaptive re-simulation agree
    assert abs(res["verified_initial"] / res["initial"] - 1) < 1e-5
    assert abs(res["verified_final"] / res["final"] - 1) < 1e-5
    assert res["assembles"] and res["assembly_residual"] < 1e-12 and res["run_ok"]
    assert res["max_violation"] < 1e-8 and res["bounds_ok"] and res["unique"]
    assert res["fd_rel_error"] < 1e-4
    for name in ("objective", "reactions", "paths"):
        assert (tmp_path / f"design_mobile_robot_{name}.png").stat().st_size > 10_000


def test_andrews_squeezer(tmp_path):
    results = _load("andrews_squeezer").main(short=True, out=tmp_path)
    assert len(results) == 2 and all(r["ok"] for r in results.values())
    assert (tmp_path / "andrews_squeezer.png").stat().st_size > 10_000


def test_bushing_vs_joint(tmp_path):
    """A redundant joint made a bushing, on the held and loaded parallelogram and Bricard:
    the rigid model's unique reactions are approached like 1/k, the non-unique ones tend
    to the split of least complementary energy predicted from the rigid model alone (the
    parallelogram's axial forces 1 : 2 for equal stiffnesses, their sum the rigid one; the
    Bricard's self-stress amplitude moving with the stiffness ratio rho)."""
    res = _load("bushing_vs_joint").main(short=True, out=tmp_path)
    ks = [r["k"] for r in res["runs"]]
    assert ks == [1e3, 1e5, 1e7]
    for runs in (res["one_bushing"]["runs"], res["runs"], res["bricard"]["runs"]):
        errors = [r["unique_error"] for r in runs]
        assert all(30 < a / b < 300 for a, b in zip(errors, errors[1:]))  # ~ 1/k, k x 100
        assert errors[2] < 1e-4 and runs[-1]["limit_distance"] < 1e-4
        assert abs(runs[-1]["alpha"] - runs[-1]["alpha_predicted"]) < 1e-5 * max(1.0, abs(runs[-1]["alpha"]))
    for rate in (res["one_bushing"]["rate"], res["rate"], res["bricard"]["rate"]):
        assert 0.9 < rate < 1.1
    two = res["runs"][-1]
    assert abs(two["split"] - 2.0) < 1e-5
    rigid_sum = sum(f[1] for k, f in res["rigid"].items() if k.startswith("O"))
    assert abs(sum(two["Fy"]) - rigid_sum) < 1e-5
    # Bricard: only the driving torque is unique; the split follows rho as predicted
    assert res["bricard"]["unique"] == ["hold.M"]
    lo, hi = res["bricard"]["rho_sweep"]
    assert lo["alpha"] - hi["alpha"] > 20
    for r in (lo, hi):
        assert abs(r["alpha"] - r["alpha_predicted"]) < 0.01 * r["alpha_predicted"]
    assert (tmp_path / "bushing_vs_joint.png").stat().st_size > 10_000


@pytest.mark.parametrize("name", _load("advise_bundled").MODELS)
def test_advise_bundled(name, tmp_path):
    """Every bundled mechanism with p > 0 and the MuJoCo four-bar closed by a connect: the
    best release of jmbs.advise, applied, moves as the original under gravity and a load
    for 1 s (the same fixed steps), every reaction of the applied model is unique, and the
    reactions that were unique are equal (issue 33, item 3)."""
    res = _load("advise_bundled").main(out=tmp_path, names=(name,))[name]
    assert res["p"] > 0 and len(res["components"]) == res["p"]
    assert res["motion"] < 1e-8 and res["all_unique"] and res["reactions"] < 1e-8, res
