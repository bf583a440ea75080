"""The main job (`jmbs demo`) as a user runs it."""

import subprocess
import sys


def test_demo_prints_the_bundled_mechanisms():
    out = subprocess.run([sys.executable, "-m", "jmbs.cli", "demo"], capture_output=True,
                         text=True, check=True).stdout
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:] if line.strip()}
    # columns: bodies nq nv nc rank p dof, not unique
    assert rows["bricard"][:7] == ["5", "35", "30", "30", "29", "1", "1"]
    assert rows["spatial_four_bar"][5:7] == ["3", "1"]
    assert rows["n_four_bar"][:1] == ["81"] and rows["n_four_bar"][7] == "-"
    assert rows["mobile_robot"][7] == "B,C,W1,W2,W3,W4"  # paper 000
    assert rows["gripper_torque"][7] == "Bt,Ct,Dt"  # paper 003, Table 4


def test_readme_example_runs():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    code = text.split("```python")[1].split("```")[0]
    namespace: dict = {}
    exec(code, namespace)
    sol, C = namespace["sol"], namespace["C"]
    assert C.shape == (9, 9)
    assert abs(float(sol.q[-1, 2]) - 6.0) < 1e-10  # crank angle 2 t at t = 3
