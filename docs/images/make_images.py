"""Regenerate the figures of the documentation made with `jmbs.plotting`.

Run from the repository root: `python docs/images/make_images.py` (a few minutes on
a small machine; not part of the tests).
"""

import math
import pathlib

import matplotlib

matplotlib.use("Agg")

import jax.numpy as jnp  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import jmbs  # noqa: E402
import jmbs.plotting as jp  # noqa: E402
from jmbs import examples  # noqa: E402

HERE = pathlib.Path(__file__).parent
DPI = 80


def save(fig, name: str) -> None:
    fig.savefig(HERE / name, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    print(name, (HERE / name).stat().st_size // 1024, "kB")


def parallelogram_q(th: float) -> np.ndarray:
    """The parallelogram with its cranks at angle `th` (pi / 2: upright, the reference)."""
    cranks = [[k + 0.5 * math.cos(th), 0.5 * math.sin(th), th] for k in range(3)]
    return np.array(sum(cranks + [[1 + math.cos(th), math.sin(th), 0.0]], []))


def main() -> None:
    for name, model in (("parallelogram", examples.parallelogram()),
                        ("mobile_robot", examples.mobile_robot()),
                        ("bricard", examples.bricard())):
        save(jp.plot_mechanism(model).figure, f"mechanism_{name}.png")

    # The parallelogram swinging: every pin's reaction is indeterminate (p = 1); the
    # horizontal components are unique only while the cranks are upright.
    model = examples.parallelogram()
    v = jmbs.consistent_velocity(model, model.q0, jnp.array([0, 0, -1.0] * 3 + [-1.0, 0, 0]))
    run = jmbs.simulate(model, 1.5, v0=v, saveat=jnp.linspace(0.0, 1.5, 61))
    save(jp.plot_reactions(run, ["O0", "B1"], kind="components"), "reactions_parallelogram.png")

    # Along the crank angle through the flat (singular) configuration at 0.
    path = jmbs.solvability_path(model, parallelogram_q, np.linspace(-1.0, math.pi / 2, 41))
    save(jp.plot_sweep(path, xlabel="crank angle (rad)"), "sweep_example.png")

    # One turn of the driven four-bar's crank.
    four_bar = examples.four_bar(omega=2 * math.pi)
    motion = jmbs.kinematics(four_bar, jnp.linspace(0.0, 1.0, 31)[:-1])
    out = jp.animate(four_bar, motion, HERE / "animation_four_bar.gif", fps=15, dpi=70)
    print(out.name, out.stat().st_size // 1024, "kB")


if __name__ == "__main__":
    main()
