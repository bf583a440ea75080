# %% [markdown]
# # Driven slider-crank: kinematic analysis against the closed form
#
# The crank of `jmbs.examples.slider_crank` turns at a constant rate; jmbs solves
# position (Gauss-Newton), velocity (`C v = -b`) and acceleration
# (`C v_dot = Gamma`) at each time. The closed form of the slider position and
# its derivatives (by `jax.grad`) is the independent reference.
#
# Run: `.venv/bin/python experiments/slider_crank_kinematics.py [--short] [--out DIR]`

# %%
import argparse
import math
from pathlib import Path

import jax
import jax.numpy as jnp

import jmbs
from jmbs import examples


def main(short: bool = False, out: Path | None = None) -> dict:
    omega, theta0 = 2.0, math.pi / 6
    model = examples.slider_crank(theta=theta0, omega=omega)
    ts = jnp.linspace(0.0, 2 * math.pi / omega, 101 if short else 1001)
    sol = jmbs.kinematics(model, ts)

    def x_of_t(t):
        return examples.slider_crank_position(theta0 + omega * t)[0]

    ref = {
        "x": jax.vmap(x_of_t)(ts),
        "v": jax.vmap(jax.grad(x_of_t))(ts),
        "a": jax.vmap(jax.grad(jax.grad(x_of_t)))(ts),
    }
    got = {"x": sol.q[:, 6], "v": sol.v[:, 6], "a": sol.v_dot[:, 6]}
    errors = {k: float(jnp.max(jnp.abs(got[k] - ref[k]))) for k in ref}
    print("slider-crank, crank 0.5 m, rod 1.5 m, omega = 2 rad/s, one turn,", len(ts), "times")
    for k, e in errors.items():
        print(f"  max |{k}_slider - closed form| = {e:.2e}")
    print(f"  max |Phi| over the run          = {float(jnp.max(sol.residual)):.2e}")
    if out is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(3, 1, sharex=True, figsize=(6, 6))
        for ax, k, unit in zip(axes, "xva", ("m", "m/s", "m/s²")):
            ax.plot(ts, ref[k], "k-", lw=3, alpha=0.3, label="closed form")
            ax.plot(ts, got[k], "C0--", label="jmbs.kinematics")
            ax.set_ylabel(f"slider {k} [{unit}]")
        axes[0].legend()
        axes[-1].set_xlabel("t [s]")
        fig.tight_layout()
        out.mkdir(parents=True, exist_ok=True)
        fig.savefig(out / "slider_crank_kinematics.png", dpi=100)
    return errors


# %%
if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--short", action="store_true", help="fewer time points")
    parser.add_argument("--out", type=Path, default=None, help="folder for the plot")
    args = parser.parse_args()
    main(args.short, args.out)
