# %% [markdown]
# # Bushing against joint: what compliance does to unique and non-unique reactions
#
# Two redundant mechanisms (p = 1), each held at rest by a driver and loaded:
#
# - the planar parallelogram with a third crank (`jmbs.examples.parallelogram()`),
#   held by a driver on crank 0's ground pin O0, under gravity and a force (3, -20) N at
#   the coupler's right end. The rigid model fixes the horizontal reaction component
#   of every pin and the driving torque (unique) but not the vertical ones (the
#   cranks' axial forces). The driver adds one independent row (rank 11 -> 12): the
#   self-stress, and so the uniqueness pattern of the six pins, is the one of the
#   undriven mechanism; the driving torque is one more unique reaction;
# - the Bricard mechanism (`jmbs.examples.bricard()`, IFToMM A04), held by a driver on
#   J4, under gravity and a force (2, 0, -5) N at the middle of rod 3. With the driver
#   no joint reaction, and no component of one, is unique; the driving torque is.
#
# A joint of the redundant loop is then replaced by a bushing at the joint's point,
# stiff in the directions the joint holds and free in its rotation:
#
# - parallelogram, **one bushing**: O1 (translational stiffnesses `kx = ky = k`);
# - parallelogram, **two bushings**: O1 and O2 (`k1 = k`, `k2 = ratio * k`);
# - Bricard, **one bushing**: J1 (translational `k`, rotational `rho * k` about x and
#   z, `rho` in m^2, none about J1's axis y).
#
# The compliant model has no redundancy and more degrees of freedom (the bushing's
# deflections); its static equilibrium is found by Newton's method on
# `F(q) - C(q)^T lambda = 0, Phi(q) = 0` (increments in velocity space,
# `jmbs.retract`), and its joint reactions are then `jmbs.statics` at that
# configuration (unique: the compliant model is not redundant). A bushing's
# reaction is its wrench on the joint's body j, from its generalized force (the
# model's forces with and without the bushing's stiffness), written in the components
# of the joint it replaces.
#
# The limit is predicted from the rigid model alone: its equilibria are
# `lambda_p + alpha s` (`lambda_p` the minimum-norm one, `s` the self-stress spanning
# `null(C^T)`), and stiff bushings pick the one of least complementary energy
# `sum_J w_J^T K_J^-1 w_J / 2` (`w_J` the wrench the replaced joint J transmits,
# `K_J` its bushing's stiffnesses): the deflections must be compatible with the rigid
# rest of the loop (Menabrea / Castigliano). Only the stiffness *ratios* enter.
#
# Run: `.venv/bin/python experiments/bushing_vs_joint.py [--short] [--out DIR]`

# %%
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jmbs
from jmbs import ModelBuilder, examples
from jmbs.examples.basic import BRICARD_AXES, BRICARD_POINTS, spatial_rod
from jmbs.rotations import quat_to_rot, rot2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import format_table, run, save_figure, write_outputs  # noqa: E402

G = 9.81
LOAD = (3.0, -20.0)  # N, on the parallelogram coupler's right end
CRANK_LOAD = (5.0, 0.0)  # N, at the middle of crank 1
BRICARD_LOAD = (2.0, 0.0, -5.0)  # N, at the middle of the Bricard's rod 3


# %% [markdown]
# ## The models

# %%
def parallelogram(bushings: dict[str, float] | None = None) -> jmbs.Model:
    """The loaded parallelogram held by a driver on O0; the ground pins named in
    `bushings` (`"O1"`, `"O2"`) are bushings of those translational stiffnesses (N/m,
    one number or `(kx, ky)`), free to turn."""
    bushings = bushings or {}
    b = ModelBuilder(dim=2, gravity=(0.0, -G))
    cranks = [examples.planar_rod(b, f"crank{k}", (k, 0), (k, 1)) for k in range(3)]
    coupler = examples.planar_rod(b, "coupler", (0, 1), (2, 1), mass=2.0)
    for k, c in enumerate(cranks):
        name = f"O{k}"
        if name in bushings:
            kx, ky = np.broadcast_to(np.asarray(bushings[name], float), (2,))
            b.add_bushing(name, b.ground, c, (k, 0.0), (kx, ky, 0.0))
        else:
            b.add_revolute(name, b.ground, c, point=(k, 0.0))
        b.add_revolute(f"B{k}", c, coupler, point=(k, 1.0))
    b.add_force("P", "coupler", LOAD, point=(2.0, 1.0))
    b.add_force("P1", "crank1", CRANK_LOAD, point=(1.0, 0.5))
    b.add_driver("hold", "O0", "0 * t")
    return b.build()


def bricard(k: float | None = None, rho: float = 1.0) -> jmbs.Model:
    """The loaded Bricard held by a driver on J4; with `k`, J1 is a bushing of
    translational stiffness `k` (N/m) and rotational stiffness `rho * k` (N m/rad,
    `rho` in m^2) about the axes normal to J1's axis (none about it)."""
    b = ModelBuilder(dim=3, gravity=(0.0, -G, 0.0))
    P = BRICARD_POINTS
    rods = [spatial_rod(b, f"rod{j + 1}", P[j], P[j + 1]) for j in range(5)]
    bodies = [b.ground, *rods, b.ground]
    for j in range(6):
        if j == 0 and k is not None:
            rotational = rho * k * (1.0 - BRICARD_AXES[0])
            b.add_bushing("J1", bodies[0], bodies[1], P[0], np.r_[k, k, k, rotational])
        else:
            b.add_revolute(f"J{j + 1}", bodies[j], bodies[j + 1], point=P[j], axis=BRICARD_AXES[j])
    b.add_force("P", "rod3", BRICARD_LOAD, point=(1.0, -1.0, 0.5))
    b.add_driver("hold", "J4", "0 * t")
    return b.build()


# %% [markdown]
# ## Static equilibrium of the compliant model

# %%
@jax.jit
def _newton_step(model: jmbs.Model, q: jax.Array, lam: jax.Array):
    """One Newton step on `F(q) - C^T lambda = 0, Phi(q) = 0`, `q` moved by a velocity-space
    increment (compiled once per structure: the stiffnesses are array leaves)."""
    nv = model.nv

    def residual(z):
        qz = jmbs.retract(model, q, z[:nv])
        C = jmbs.constraint_matrix(model, qz, 0.0)
        F = jmbs.generalized_forces(model, qz, jnp.zeros(nv), 0.0)
        return jnp.concatenate([F - C.T @ z[nv:], jmbs.phi(model, qz, 0.0)])

    z = jnp.concatenate([jnp.zeros(nv), lam])
    dz = -jnp.linalg.solve(jax.jacfwd(residual)(z), residual(z))
    return jmbs.retract(model, q, dz[:nv]), lam + dz[nv:], jnp.max(jnp.abs(dz[:nv]))


def equilibrium(model: jmbs.Model, iterations: int = 40) -> np.ndarray:
    """The static equilibrium near `model.q0` (the compliant model has no redundancy, so
    the Jacobian is regular). Stops when the position step is below 1e-13 (m, rad):
    Newton converges quadratically, so the configuration is then at rounding level."""
    q, lam = model.q0, jnp.zeros(model.nc)
    for _ in range(iterations):
        q, lam, step = _newton_step(model, q, lam)
        if float(step) < 1e-13:
            return np.asarray(q)
    raise RuntimeError("the equilibrium iteration did not converge")


# %% [markdown]
# ## Wrenches, and the rigid model's limit of least complementary energy

# %%
def wrench(model: jmbs.Model, q, body: str, g, p) -> np.ndarray:
    """The wrench `(force, torque about p)` (global) equivalent to the generalized force
    `g (nv,)` on `body` (force, moment about the centre of mass; 3-D body frame)."""
    k, d = model.body_index(body), model.dim
    n = 3 if d == 2 else 6
    qb, gb = np.asarray(model.body_q(q, body)), np.asarray(g)[k * n:(k + 1) * n]
    f, arm = gb[:d], np.asarray(p) - qb[:d]
    if d == 2:
        return np.r_[f, gb[2] - (arm[0] * f[1] - arm[1] * f[0])]
    return np.r_[f, np.asarray(quat_to_rot(qb[3:])) @ gb[3:] - np.cross(arm, f)]


def local_point(model: jmbs.Model, body: str, p) -> np.ndarray:
    """Body-frame coordinates of the global point `p` in the reference configuration."""
    qb = np.asarray(model.body_q(model.q0, body))
    d = model.dim
    R = np.asarray(rot2(qb[2]) if d == 2 else quat_to_rot(qb[3:]))
    return R.T @ (np.asarray(p, float) - qb[:d])


class Rigid:
    """The rigid model's statics and what the limit needs: the minimum-norm multipliers
    `lam`, the unit self-stress `s`, the unique components, and for each joint that a
    bushing replaces (`joints`: name -> (body j, point)) the matrix `W` taking the
    joint's multipliers to its wrench on body j."""

    def __init__(self, model: jmbs.Model, joints: dict[str, tuple[str, tuple]]):
        self.model, self.joints = model, joints
        q = model.q0
        st = jmbs.statics(model, q)
        assert bool(st.in_equilibrium)
        self.rep = jmbs.solvability(model)
        self.lam = np.asarray(st.reactions.multipliers)
        self.unique = np.asarray(st.reactions.component_unique)
        U, _, _ = np.linalg.svd(np.asarray(jmbs.constraint_matrix(model, q)))
        assert self.rep.redundancy == 1  # null(C^T): the left singular vectors past the rank
        s = U[:, self.rep.rank]
        # Sign convention: the first component that is not zero (to rounding) is positive
        # (the largest one is not a convention: several can tie, and rounding picks one).
        self.s = s * np.sign(s[np.flatnonzero(np.abs(s) > 1e-6 * np.abs(s).max())[0]])
        A = np.asarray(jmbs.kinetostatic_matrix(model, q))  # A x: generalized force of x = -lam
        self.W = {}
        for name, (body, p) in joints.items():
            rows = model.rows(name)
            self.W[name] = np.stack([wrench(model, q, body, -A[:, r], p)
                                     for r in range(rows.start, rows.stop)], axis=1)

    def limit(self, stiffness: dict[str, np.ndarray]) -> np.ndarray:
        """The multipliers `lam + alpha s` of least complementary energy for bushings of
        these stiffnesses (per replaced joint, per wrench component; zero: free)."""
        num = den = 0.0
        for name, k in stiffness.items():
            rows = self.model.rows(name)
            flex = np.where(np.asarray(k) > 0, 1.0 / np.where(np.asarray(k) > 0, k, 1.0), 0.0)
            ws, wp = self.W[name] @ self.s[rows], self.W[name] @ self.lam[rows]
            num, den = num + ws @ (flex * wp), den + ws @ (flex * ws)
        return self.lam - num / den * self.s

    def alpha(self, lam: np.ndarray) -> float:
        """The self-stress amplitude of `lam` relative to the minimum-norm multipliers."""
        return float(self.s @ (lam - self.lam))


def compliant_multipliers(rigid: Rigid, model: jmbs.Model, q: np.ndarray, bushings) -> np.ndarray:
    """The compliant model's reactions at its equilibrium `q` as multipliers of the rigid
    model (its layout): joints and drivers as they are, and each bushing (`bushings`: the
    names of the joints they replace) by its wrench on the
    joint's body j written in the components of the joint it replaces (least squares:
    the bushing also carries what the joint cannot, a residual of order 1/k)."""
    st = jmbs.statics(model, q)
    assert bool(st.in_equilibrium)
    lam = np.zeros(rigid.model.nc)
    for name in rigid.model.element_names:
        rows = rigid.model.rows(name)
        if name in bushings:
            body, p = rigid.joints[name]
            zero = {f"{name}.stiffness": jnp.zeros_like(model.params()[f"{name}.stiffness"])}
            g = (jmbs.generalized_forces(model, q, jnp.zeros(model.nv))
                 - jmbs.generalized_forces(model.with_params(zero), q, jnp.zeros(model.nv)))
            pj = model.point(q, body, local_point(model, body, p))
            lam[rows] = np.linalg.lstsq(rigid.W[name], wrench(model, q, body, g, pj), rcond=None)[0]
        else:
            lam[rows] = np.asarray(st.reactions.multipliers)[model.rows(name)]
    return lam


def study(rigid: Rigid, build, stiffness: dict[str, np.ndarray]) -> dict:
    """One compliant model at equilibrium against the rigid model: the largest error of
    the unique components, the distance of all components to the predicted limit, the
    multipliers and the self-stress amplitude (predicted and obtained)."""
    model = build()
    q = equilibrium(model)
    lam = compliant_multipliers(rigid, model, q, stiffness)
    lim = rigid.limit(stiffness)
    u = rigid.unique
    return {"unique_error": float(np.max(np.abs(lam[u] - rigid.lam[u]))),
            "limit_distance": float(np.max(np.abs(lam - lim))),
            "alpha": rigid.alpha(lam), "alpha_predicted": rigid.alpha(lim),
            "components": (-lam).tolist(), "predicted": (-lim).tolist()}


def rate(ks, errors) -> float:
    """Least-squares slope of log(error) against log(k) (convergence order: error ~ k^-rate)."""
    return float(-np.polyfit(np.log(ks), np.log(errors), 1)[0])


def component(model: jmbs.Model, x, name: str, comp: str) -> float:
    """The component `comp` of element `name` in a vector `x` of the rigid model's layout."""
    info = model.element(name)
    return float(np.asarray(x)[model.rows(name)][info.components.index(comp)])


# %% [markdown]
# ## The studies

# %%
def main(short: bool = False, out: Path | None = None) -> dict:
    t_start = time.perf_counter()
    stiffnesses = [1e3, 1e5, 1e7] if short else [1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]
    texts, results = [], {}

    # ---- parallelogram ----
    pins = {f"O{k}": (f"crank{k}", (float(k), 0.0)) for k in (1, 2)}
    rigid = Rigid(parallelogram(), pins)
    ref = {f"O{k}": np.asarray(jmbs.statics(rigid.model, rigid.model.q0).reactions.force(
        f"O{k}", allow_nonunique=True)) for k in range(3)}
    fy = {n: component(rigid.model, -rigid.lam, n, "Fy") for n in ("O0", "O1", "O2")}
    unique = [f"{n}.{c}" for n in rigid.model.element_names
              for c, u in zip(rigid.model.element(n).components, rigid.unique[rigid.model.rows(n)]) if u]
    texts.append(
        f"PARALLELOGRAM, held by a driver on O0, gravity + {LOAD} N at the coupler's end\n"
        f"rigid model: rank {rigid.rep.rank}, p = {rigid.rep.redundancy}; unique: {', '.join(unique)}; "
        "not unique: the Fy\n"
        f"rigid (minimum-norm) Fy: " + ", ".join(f"{n} {v:.4f}" for n, v in fy.items())
        + f"; their sum {sum(fy.values()):.4f} N is unique")
    results["rigid"] = {k: v.tolist() for k, v in ref.items()}
    results["rigid"]["hold"] = [component(rigid.model, -rigid.lam, "hold", "M")]

    def o_fy(r, n):
        return component(rigid.model, r["components"], n, "Fy")

    # one bushing (O1), kx = ky = k; then kx / ky varied at the stiffest
    rows, runs1 = [], []
    for k in stiffnesses:
        r = study(rigid, lambda k=k: parallelogram({"O1": k}), {"O1": np.array([k, k, 0.0])})
        runs1.append({"k": k, "kx/ky": 1.0, **r})
    for ratio in ([] if short else [0.1, 10.0]):
        k = stiffnesses[-2]
        r = study(rigid, lambda ratio=ratio, k=k: parallelogram({"O1": (ratio * k, k)}),
                  {"O1": np.array([ratio * k, k, 0.0])})
        runs1.append({"k": k, "kx/ky": ratio, **r})
    for r in runs1:
        rows.append([f"{r['kx/ky']:g}", f"{r['k']:.0e}", f"{r['unique_error']:.2e}",
                     f"{r['limit_distance']:.2e}", *(f"{o_fy(r, n):.4f}" for n in ("O0", "O1", "O2"))])
    sweep1 = [r for r in runs1 if r["kx/ky"] == 1.0]
    rate1 = rate([r["k"] for r in sweep1], [r["unique_error"] for r in sweep1])
    texts.append(
        "one bushing at O1 (kx, ky = k): the bushing takes none of the redundant vertical load "
        "in the limit (predicted: O1 Fy -> 0 for every kx/ky)\n"
        + format_table(["kx/ky", "ky [N/m]", "max |unique - rigid|", "|all - predicted limit|",
                        "O0 Fy", "O1 Fy", "O2 Fy"], rows)
        + f"\nunique error ~ k^-{rate1:.2f}")
    results["one_bushing"] = {"runs": runs1, "rate": rate1}

    # two bushings (O1, O2): k1 = k, k2 = ratio * k
    ratios = [1.0] if short else [0.5, 1.0, 2.0]
    rows, runs2 = [], []
    for ratio in ratios:
        for k in stiffnesses:
            r = study(rigid, lambda k=k, ratio=ratio: parallelogram({"O1": k, "O2": ratio * k}),
                      {"O1": np.array([k, k, 0.0]), "O2": np.array([ratio * k, ratio * k, 0.0])})
            runs2.append({"ratio": ratio, "k": k, **r, "Fy": [o_fy(r, f"O{i}") for i in range(3)],
                          "split": o_fy(r, "O2") / o_fy(r, "O1")})
    split_sweep = []
    for k in ([] if short else [1e4, 1e8]):
        for ratio in np.logspace(-1, 1, 9):
            r = study(rigid, lambda k=k, ratio=ratio: parallelogram({"O1": k, "O2": ratio * k}),
                      {"O1": np.array([k, k, 0.0]), "O2": np.array([ratio * k, ratio * k, 0.0])})
            split_sweep.append({"k": k, "ratio": float(ratio), "split": o_fy(r, "O2") / o_fy(r, "O1"),
                                "split_predicted": (component(rigid.model, r["predicted"], "O2", "Fy")
                                                    / component(rigid.model, r["predicted"], "O1", "Fy")),
                                "limit_distance": r["limit_distance"]})
    for r in runs2:
        rows.append([r["ratio"], f"{r['k']:.0e}", f"{r['unique_error']:.2e}", f"{r['limit_distance']:.2e}",
                     *(f"{v:.4f}" for v in r["Fy"]), f"{r['split']:.4f}"])
    rate2 = rate([r["k"] for r in runs2 if r["ratio"] == 1.0], [r["unique_error"] for r in runs2
                                                                  if r["ratio"] == 1.0])
    text = ("two bushings at O1, O2 (k1 = k, k2 = ratio k): the axial forces of cranks 1 and 2 split "
            "k1 : 2 k2 (predicted)\n"
            + format_table(["k2/k1", "k1 [N/m]", "max |unique - rigid|", "|all - predicted limit|",
                            "O0 Fy", "O1 Fy", "O2 Fy", "O2 Fy / O1 Fy"], rows)
            + f"\nunique error ~ k^-{rate2:.2f}")
    if split_sweep:
        text += "\nsplit O2 Fy / O1 Fy against k2/k1: " + "; ".join(
            f"k = {k:.0e}: " + ", ".join(f"{r['ratio']:.2f} -> {r['split']:.4f}"
                                          for r in split_sweep if r["k"] == k) for k in (1e4, 1e8))
        text += (f"\n  max |split - 2 k2/k1| at k = 1e8: "
                 f"{max(abs(r['split'] - 2 * r['ratio']) for r in split_sweep if r['k'] == 1e8):.1e}")
    texts.append(text)
    results["runs"], results["rate"], results["split_sweep"] = runs2, rate2, split_sweep

    # ---- Bricard ----
    rigid3 = Rigid(bricard(), {"J1": ("rod1", tuple(BRICARD_POINTS[0]))})
    unique3 = [f"{n}.{c}" for n in rigid3.model.element_names
               for c, u in zip(rigid3.model.element(n).components, rigid3.unique[rigid3.model.rows(n)]) if u]
    hold3 = component(rigid3.model, -rigid3.lam, "hold", "M")

    def bushing_k(k, rho):
        return np.r_[k, k, k, rho * k * (1.0 - BRICARD_AXES[0])]

    rows, runs3 = [], []
    for k in stiffnesses:
        r = study(rigid3, lambda k=k: bricard(k), {"J1": bushing_k(k, 1.0)})
        runs3.append({"k": k, "rho": 1.0, **r})
        rows.append([f"{k:.0e}", f"{r['unique_error']:.2e}", f"{r['limit_distance']:.2e}",
                     f"{r['alpha']:.4f}", f"{r['alpha_predicted']:.4f}"])
    rate3 = rate([r["k"] for r in runs3], [r["unique_error"] for r in runs3])
    rate3_limit = rate([r["k"] for r in runs3], [r["limit_distance"] for r in runs3])
    texts.append(
        f"BRICARD, held by a driver on J4, gravity + {BRICARD_LOAD} N at rod 3's middle; J1 a bushing "
        "(k on x, y, z; rho k on rx, rz; free about y)\n"
        f"rigid model: rank {rigid3.rep.rank}, p = {rigid3.rep.redundancy}; unique: {', '.join(unique3)} "
        f"({hold3:.4f} N m); no joint component is unique\n"
        "rho = 1 m^2; alpha: the self-stress amplitude (|s| = 1) over the rigid minimum-norm reactions\n"
        + format_table(["k [N/m]", "|hold.M - rigid|", "|all - predicted limit|", "alpha",
                        "alpha predicted"], rows)
        + f"\nunique error ~ k^-{rate3:.2f}; distance to the predicted limit ~ k^-{rate3_limit:.2f}")
    rho_sweep = []
    j1 = ("Fx", "Fy", "Fz", "Mx", "My")
    for k in ([1e5] if short else [1e4, 1e8]):
        for rho in ([1e-2, 1e2] if short else np.logspace(-2, 2, 9)):
            r = study(rigid3, lambda k=k, rho=rho: bricard(k, rho), {"J1": bushing_k(k, rho)})
            rho_sweep.append({"k": k, "rho": float(rho), **r,
                              "J1": [component(rigid3.model, r["components"], "J1", c) for c in j1],
                              "J1_predicted": [component(rigid3.model, r["predicted"], "J1", c)
                                               for c in j1]})
    rows = [[f"{r['k']:.0e}", f"{r['rho']:.2g}", f"{r['alpha']:.4f}", f"{r['alpha_predicted']:.4f}",
             *(f"{v:.3f}" for v in r["J1"]), f"{r['unique_error']:.1e}"] for r in rho_sweep]
    texts.append("the split against the stiffness ratio rho = k_rot / k_trans [m^2]\n"
                 + format_table(["k [N/m]", "rho", "alpha", "alpha predicted",
                                 *(f"J1 {c}" for c in j1), "|hold.M - rigid|"], rows)
                 + "\nrigid minimum-norm J1: " + ", ".join(
                     f"{c} {component(rigid3.model, -rigid3.lam, 'J1', c):.3f}" for c in j1))
    results["bricard"] = {"runs": runs3, "rate": rate3, "rate_limit": rate3_limit,
                          "rho_sweep": rho_sweep, "hold": hold3, "unique": unique3}
    results["seconds"] = time.perf_counter() - t_start
    text = "\n\n".join(texts)
    print(text)
    print(f"\n({results['seconds']:.0f} s)")
    write_outputs(out, "bushing_vs_joint", [text], results)
    if out is not None:
        figure(out, results)
    return results


def figure(out: Path, results: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(2, 2, figsize=(11, 8))
    # parallelogram: errors
    one = [r for r in results["one_bushing"]["runs"] if r["kx/ky"] == 1.0]
    two = [r for r in results["runs"] if r["ratio"] == 1.0]
    a = ax[0, 0]
    a.loglog([r["k"] for r in one], [r["unique_error"] for r in one], "o-",
             label="one bushing (O1): unique")
    a.loglog([r["k"] for r in one], [r["limit_distance"] for r in one], "s--",
             label="one bushing: all, to the limit")
    a.loglog([r["k"] for r in two], [r["unique_error"] for r in two], "o-",
             label="two bushings (O1, O2): unique")
    a.loglog([r["k"] for r in two], [r["limit_distance"] for r in two], "s--",
             label="two bushings: all, to the limit")
    a.set_xlabel("bushing stiffness k [N/m]")
    a.set_ylabel("reaction error [N, N m]")
    a.set_title(f"parallelogram: unique error ~ k^-{results['one_bushing']['rate']:.1f} (one), "
                f"k^-{results['rate']:.1f} (two)", fontsize=10)
    a.legend(fontsize=8)
    # parallelogram: split against the ratio
    a = ax[0, 1]
    sweep = results["split_sweep"]
    for k, marker in ((1e4, "o"), (1e8, "x")):
        pts = [r for r in sweep if r["k"] == k]
        if pts:
            a.loglog([r["ratio"] for r in pts], [r["split"] for r in pts], marker, label=f"k1 = {k:.0e} N/m")
    if sweep:
        xs = np.logspace(-1, 1, 50)
        a.loglog(xs, 2 * xs, color="0.5", lw=1, label="predicted: 2 k2/k1")
        a.legend(fontsize=8)
    a.set_xlabel("stiffness ratio k2/k1")
    a.set_ylabel("axial force, crank 2 / crank 1")
    a.set_title("parallelogram, two bushings: the non-unique split", fontsize=10)
    # Bricard: errors
    b3 = results["bricard"]
    a = ax[1, 0]
    a.loglog([r["k"] for r in b3["runs"]], [r["unique_error"] for r in b3["runs"]], "o-",
             label="driving torque (unique)")
    a.loglog([r["k"] for r in b3["runs"]], [r["limit_distance"] for r in b3["runs"]], "s--",
             label="all components, to the limit")
    a.set_xlabel("bushing stiffness k [N/m] (rotational: 1 m^2 x k)")
    a.set_ylabel("reaction error [N, N m]")
    a.set_title(f"Bricard, J1 a bushing: error ~ k^-{b3['rate']:.1f}", fontsize=10)
    a.legend(fontsize=8)
    # Bricard: J1 against rho
    a = ax[1, 1]
    comps = ("Fx", "Fy", "Fz", "Mx", "My")
    hi = [r for r in b3["rho_sweep"] if r["k"] == max(x["k"] for x in b3["rho_sweep"])]
    lo = [r for r in b3["rho_sweep"] if r["k"] == min(x["k"] for x in b3["rho_sweep"])]
    for i, c in enumerate(comps):
        line, = a.semilogx([r["rho"] for r in hi], [r["J1_predicted"][i] for r in hi], "-", lw=1,
                           label=f"J1 {c}")
        a.semilogx([r["rho"] for r in hi], [r["J1"][i] for r in hi], "x", color=line.get_color())
        if lo is not hi:
            a.semilogx([r["rho"] for r in lo], [r["J1"][i] for r in lo], "o", mfc="none",
                       color=line.get_color())
    a.set_xlabel("rotational / translational stiffness rho [m^2]")
    a.set_ylabel("J1 reaction component [N, N m]")
    a.set_title(f"Bricard: the split set by rho (x: k = {hi[0]['k']:.0e}, o: k = {lo[0]['k']:.0e}, "
                "lines: predicted)", fontsize=9)
    a.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    save_figure(out, "bushing_vs_joint", fig)
    plt.close(fig)


# %%
if __name__ == "__main__":
    run(main, "Bushing against joint: compliant limits of unique and non-unique reactions.")
