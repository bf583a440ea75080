# %% [markdown]
# # Bushing against joint: what compliance does to unique and non-unique reactions
#
# The planar parallelogram with a third crank (`jmbs.examples.parallelogram()`), held
# at rest by a driver on crank 0's ground pin and loaded by gravity and a force on
# the coupler's end, is redundant (p = 1): the rigid model fixes the horizontal
# reaction components and the driving torque (unique) but not the vertical ones (the
# cranks' axial forces), of which every formulation reports another split.
#
# Here the ground pins of cranks 1 and 2 become bushings of translational stiffness
# `k1 = k` and `k2 = ratio * k` (no rotational stiffness: they still turn freely).
# The compliant model has no redundancy; its static equilibrium is found by Newton's
# method on `F(q) - C(q)^T lambda = 0, Phi(q) = 0`. As `k` grows,
# - the reactions the rigid model calls unique converge to the rigid model's values,
#   the error falling like `1/k^2` (the deflections enter their balance only through
#   the small turn of the bodies);
# - the non-unique ones settle to a split set by the stiffness ratio, not by `k`:
#   the rigid coupler turns about its pin on crank 0 by a small angle, the bushings
#   deflect by it times their distances (1 and 2 m), so the axial forces of cranks 1
#   and 2 split in the ratio `k1 : 2 k2`.
#
# Run: `.venv/bin/python experiments/bushing_vs_joint.py [--short] [--out DIR]`

# %%
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jmbs
from jmbs import ModelBuilder, examples

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import format_table, run, save_figure, write_outputs  # noqa: E402

G = 9.81
LOAD = (3.0, -20.0)  # N, on the coupler's right end


def parallelogram(k1: float | None = None, k2: float | None = None) -> jmbs.Model:
    """The loaded, held parallelogram; with `k1, k2` the ground pins of cranks 1 and 2
    are bushings of those translational stiffnesses (N/m)."""
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    cranks = [examples.planar_rod(b, f"crank{k}", (k, 0), (k, 1)) for k in range(3)]
    coupler = examples.planar_rod(b, "coupler", (0, 1), (2, 1), mass=2.0)
    for k, c in enumerate(cranks):
        if k == 0 or k1 is None:
            b.add_revolute(f"O{k}", b.ground, c, point=(k, 0.0))
        else:
            s = k1 if k == 1 else k2
            b.add_bushing(f"O{k}", b.ground, c, (k, 0.0), (s, s, 0.0))
        b.add_revolute(f"B{k}", c, coupler, point=(k, 1.0))
    b.add_force("P", "coupler", LOAD, point=(2.0, 1.0))
    b.add_driver("hold", "O0", "0 * t")
    return b.build()


@jax.jit
def _newton_step(model: jmbs.Model, z: jax.Array) -> jax.Array:
    """One Newton step on `(q, lambda)` (compiled once per structure: the stiffnesses
    are array leaves of the model)."""
    nq = model.nq

    def residual(z):
        q, lam = z[:nq], z[nq:]
        C = jmbs.constraint_matrix(model, q, 0.0)
        F = jmbs.generalized_forces(model, q, jnp.zeros(model.nv), 0.0)
        return jnp.concatenate([F - C.T @ lam, jmbs.phi(model, q, 0.0)])

    return z - jnp.linalg.solve(jax.jacfwd(residual)(z), residual(z))


def equilibrium(model: jmbs.Model, iterations: int = 30) -> np.ndarray:
    """The static equilibrium near `model.q0`: Newton's method on
    `F(q) - C(q)^T lambda = 0, Phi(q) = 0` (the compliant model has no redundancy, so
    the Jacobian is regular)."""
    z = jnp.concatenate([model.q0, jnp.zeros(model.nc)])
    for _ in range(iterations):
        z_new = _newton_step(model, z)
        if float(jnp.max(jnp.abs(z_new - z))) < 1e-15 * (1 + float(jnp.max(jnp.abs(z)))):
            return np.asarray(z_new[:model.nq])
        z = z_new
    return np.asarray(z[:model.nq])


def pin_forces(model: jmbs.Model, q: np.ndarray, stiffness: dict[str, float]) -> dict[str, np.ndarray]:
    """The force on each crank from its ground pin: a joint's reaction (statics at `q`,
    in equilibrium) or a bushing's `-k d` (its deflection `d` from the ground point)."""
    st = jmbs.statics(model, q)
    assert bool(st.in_equilibrium)
    out = {}
    for k in range(3):
        name = f"O{k}"
        if name in stiffness:  # the crank's bottom: body point (-0.5, 0) (the rod is along x)
            out[name] = -stiffness[name] * (np.asarray(model.point(q, f"crank{k}", (-0.5, 0.0)))
                                            - np.array([k, 0.0]))
        else:
            out[name] = np.asarray(st.reactions.force(name, allow_nonunique=True))
    out["hold"] = np.asarray(st.reactions.components("hold", "M", allow_nonunique=True))
    return out


def main(short: bool = False, out: Path | None = None) -> dict:
    rigid = parallelogram()
    rep = jmbs.solvability(rigid)
    st = jmbs.statics(rigid, rigid.q0)
    ref = {f"O{k}": np.asarray(st.reactions.force(f"O{k}", allow_nonunique=True)) for k in range(3)}
    ref["hold"] = np.asarray(st.reactions.components("hold", "M"))
    stiffnesses = [1e3, 1e5, 1e7] if short else [1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8]
    ratios = [1.0] if short else [0.5, 1.0, 2.0]
    rows, results = [], {"rigid": {k: v.tolist() for k, v in ref.items()}, "runs": []}
    for ratio in ratios:
        for k in stiffnesses:
            model = parallelogram(k, ratio * k)
            q = equilibrium(model)
            f = pin_forces(model, q, {"O1": k, "O2": ratio * k})
            # unique in the rigid model: the horizontal components and the torque
            unique_err = max(max(abs(f[n][0] - ref[n][0]) for n in ("O0", "O1", "O2")),
                             abs(float(f["hold"]) - float(ref["hold"])))
            split = f["O2"][1] / f["O1"][1]
            rows.append([ratio, f"{k:.0e}", f"{unique_err:.2e}", f"{f['O0'][1]:.4f}", f"{f['O1'][1]:.4f}",
                         f"{f['O2'][1]:.4f}", f"{split:.4f}"])
            results["runs"].append({"ratio": ratio, "k": k, "unique_error": unique_err,
                                    "Fy": [float(f[f"O{i}"][1]) for i in range(3)], "split": split})
    text = (f"rigid model: rank {rep.rank}, p = {rep.redundancy}; unique: "
            f"{', '.join(n + '.Fx' for n in ('O0', 'O1', 'O2'))}, hold.M; not unique: the Fy\n"
            f"rigid (minimum-norm) Fy: " + ", ".join(f"{n} {ref[n][1]:.4f}" for n in ("O0", "O1", "O2"))
            + f"; their sum {sum(ref[n][1] for n in ('O0', 'O1', 'O2')):.4f} N is unique\n"
            + format_table(["k2/k1", "k1 [N/m]", "max |unique - rigid|", "O0 Fy", "O1 Fy", "O2 Fy",
                            "O2 Fy / O1 Fy"], rows))
    print(text)
    write_outputs(out, "bushing_vs_joint", [text], results)
    if out is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(1, 2, figsize=(11, 4))
        for ratio in ratios:
            runs = [r for r in results["runs"] if r["ratio"] == ratio]
            ks = [r["k"] for r in runs]
            ax[0].loglog(ks, [r["unique_error"] for r in runs], "o-", label=f"k2/k1 = {ratio:g}")
            ax[1].semilogx(ks, [r["split"] for r in runs], "o-", label=f"k2/k1 = {ratio:g}")
            ax[1].axhline(2 * ratio, color="0.6", ls=":", lw=1)
        ax[0].set_xlabel("bushing stiffness k1 [N/m]")
        ax[0].set_ylabel("max |unique reaction - rigid| [N, N m]")
        ax[0].set_title("unique reactions converge (like 1/k²)")
        ax[1].set_xlabel("bushing stiffness k1 [N/m]")
        ax[1].set_ylabel("axial force, crank 2 / crank 1")
        ax[1].set_title("non-unique: the split is set by k2/k1 (dotted: 2 k2/k1)")
        for a in ax:
            a.legend()
        fig.tight_layout()
        save_figure(out, "bushing_vs_joint", fig)
    return results


# %%
if __name__ == "__main__":
    run(main, None)
