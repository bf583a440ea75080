"""The experiments run end to end in a short mode."""

import importlib.util
from pathlib import Path

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
