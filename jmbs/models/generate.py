"""Write the bundled model files from `jmbs.examples`: `python -m jmbs.models.generate`.

The files are committed; a test checks that they equal what this writes, so
the files and the Python builders cannot drift apart.
"""

from pathlib import Path

from .. import examples
from ..io import dumps

DESCRIPTIONS = {
    "pendulum": "simple pendulum: a 1 m rod on a distance constraint to the ground (IFToMM A01)",
    "slider_crank": "planar slider-crank at 30 degrees (crank 0.5 m, rod 1.5 m)",
    "four_bar": "planar four-bar at 60 degrees (links 1, 2.5, 2, ground 3 m)",
    "parallelogram": "planar parallelogram with a third crank, p = 1",
    "n_four_bar": "IFToMM A02: 41 cranks joined by 40 couplers (n four-bar mechanism)",
    "spatial_four_bar": "spatial four-bar with parallel revolute axes, p = 3",
    "bricard": "IFToMM A04: Bricard's overconstrained mechanism, p = 1",
    "andrews_squeezer": "Andrews' squeezing mechanism (Hairer & Wanner; the IVP test set): 7 "
                        "bodies, a spring and a driving torque",
    "mobile_robot": "Wojtyra & Fraczek (paper 000): mobile robot with trolley, redundant "
                    "nonholonomic constraints, p = 2",
    "gripper": "Pekal & Fraczek (paper 003): gripper without actuation",
    "gripper_torque": "Pekal & Fraczek (paper 003): gripper driven by a torque in Cr",
    "gripper_overactuated": "Pekal & Fraczek (paper 003): gripper driven in Cr and Bt "
                            "(overactuated)",
    "spatial_parallelogram": "Pekal et al. (paper 001): spatial parallelogram mechanism",
    "redundant_manipulator": "Pekal & Fraczek (paper 003): manipulator with drives in A, Hc, Ic",
    "redundant_manipulator_overactuated": "Pekal & Fraczek (paper 003): the manipulator with "
                                          "a twin boom cylinder (overactuated)",
    "four_wheeled_robot": "a chassis on two rigid axles with four wheels rolling on the ground: "
                          "redundant nonholonomic constraints in 3-D, p = 5",
}


def texts() -> dict[str, str]:
    """The text of every bundled model file, by name."""
    return {name: dumps(make(), description=DESCRIPTIONS[name])
            for name, make in examples.ALL.items()}


def main() -> None:
    folder = Path(__file__).parent
    for name, text in texts().items():
        (folder / f"{name}.yaml").write_text(text)
        print(f"wrote {folder / name}.yaml")


if __name__ == "__main__":
    main()
