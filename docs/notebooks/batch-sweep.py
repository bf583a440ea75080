# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Sweeps: many configurations and many designs at once
#
# ## What you will learn
#
# - how to follow the rank and the uniqueness verdicts along a one-parameter path of
#   configurations with `jmbs.solvability_path`, and how it locates singular
#   configurations between the grid points;
# - how to check those events against closed-form kinematics and an independent SVD;
# - what "unique" means in floating point: a criterion below a tolerance, and how wide
#   the window of an isolated verdict is;
# - how to sweep random configurations with `jmbs.solvability_sweep`, and why the rank
#   margins must be read with the ranks;
# - how to evaluate a function of the design over thousands of designs with
#   `jmbs.batch_map` (jit + vmap, in chunks): the redundancy of a parallelogram with a
#   manufacturing error, and the static driving torque of 20 000 designs (2 000 in short
#   mode) against its closed form.
#
# The mechanism is the parallelogram with a third crank of
# [the first notebook](../first-mechanism/), here as the bundled
# `jmbs.examples.parallelogram()`: three 1 m cranks standing upright on ground pins at
# x = 0, 1, 2 m, joined at their tops by a 2 m coupler. With `JMBS_NOTEBOOK_SHORT=1` the
# sweeps are smaller.

# %%
import os
import time

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np

import jmbs
import jmbs.plotting

SHORT = os.environ.get("JMBS_NOTEBOOK_SHORT") == "1"
N_SAMPLES = 200 if SHORT else 1000  # random configurations
N_DELTA = 23 if SHORT else 45  # manufacturing errors per sign
N_DESIGNS = 2_000 if SHORT else 20_000  # designs of the static sweep
G = 9.81

model = jmbs.examples.parallelogram()
print(model)
print(f"short mode: {SHORT}")

# %% [markdown]
# ## Along the crank angle: `jmbs.solvability_path`
#
# The parallelogram has one degree of freedom, the common crank angle `phi` (from the x
# axis; the reference configuration is upright, `phi = pi/2`). Its configurations are
# known in closed form: crank `k` has its centre at `(k + cos(phi)/2, sin(phi)/2)` and
# angle `phi`, the coupler its centre at `(1 + cos(phi), sin(phi))` and angle 0. We check
# that this path satisfies the constraints, then let `jmbs.solvability_path` sweep it.

# %%
def q_of(phi, L=1.0):
    """The parallelogram's configuration at crank angle phi (crank length L)."""
    c, s = jnp.cos(phi), jnp.sin(phi)
    cranks = [v for k in range(3) for v in (k + L / 2 * c, L / 2 * s, phi)]
    return jnp.array([*cranks, 1.0 + L * c, L * s, 0.0])


assert np.allclose(q_of(np.pi / 2), model.q0, atol=1e-15)
worst = max(float(jnp.abs(jmbs.phi(model, q_of(p), 0.0)).max()) for p in np.linspace(-4, 4, 17))
print(f"largest constraint residual along the closed-form path: {worst:.1e}")

h = 0.05  # a grid through the upright configuration, from -0.53 to 3.67 rad
s = np.pi / 2 + h * np.arange(-42, 43)
start = time.perf_counter()
path = jmbs.solvability_path(model, q_of, s, progress=False)
print(f"{len(s)} grid points, {len(path.events)} events located in {time.perf_counter() - start:.1f} s")
for e in path.events:
    print(f"phi = {e.s:+.10f}: {e.describe()}")

# %%
fig = jmbs.plotting.plot_sweep(path, xlabel="crank angle phi [rad]")
plt.show()

# %% [markdown]
# Two kinds of events were found.
#
# **Singular configurations at `phi = 0` and `phi = pi`.** No grid point lies there (the
# grid steps by 0.05 rad from `pi/2`); jmbs found them by a golden-section search on the
# smallest rank-revealing value, which dips between grid points. There the cranks lie flat
# on the ground line and all six pins are collinear. A velocity analysis by hand: crank `k`
# turning at `omega_k` moves its coupler pin, at `x = k + 1` on the ground line, vertically
# at `omega_k`; the coupler, a rigid line through those pins, accepts any pin velocities
# linear in `k`, so `omega_k = a + b k` gives **two** instantaneous degrees of freedom:
# rank `12 - 2 = 10`, one less than elsewhere. An SVD of `C` in NumPy agrees:

# %%
for phi_s in (0.0, np.pi):
    sv = np.linalg.svd(np.asarray(jmbs.constraint_matrix(model, q_of(phi_s), 0.0)), compute_uv=False)
    zero = int((sv < 1e-12 * sv[0]).sum())
    print(f"phi = {phi_s:.4f}: {zero} zero singular values, rank {len(sv) - zero}")
    assert zero == 2
singular = [e for e in path.events if e.kind == "singular"]
assert [round(e.s, 8) for e in singular] == [0.0, round(np.pi, 8)]
assert all(e.rank_at == 10 for e in singular)

# %% [markdown]
# **Changes of component verdicts a few micro-radians either side of `pi/2`.** The
# self-stress of the parallelogram lies along the cranks, `(1, -2, 1)` times
# `(cos(phi), sin(phi))` at both ends of each crank (derived in the first notebook). So
# the `Fx` components are unique only where `cos(phi) = 0`, the upright configuration,
# which the grid contains. In floating point, a component is unique when its criterion
# (its row of the null-space basis, on the equilibrated matrix) is below the tolerance
# `ctol = 1e-6`. The criterion grows like `c_j |cos(phi)|`, so the window is
# `|phi - pi/2| < ctol / c_j`: half as wide for the middle crank, whose self-stress entry
# is twice as large. `solvability_decisions` is a pure function, so we jit and vmap it
# to look at the criteria over a fine grid:

# %%
decide = jax.jit(jax.vmap(lambda q: jmbs.solvability_decisions(model, q, method="nullspace")))
phis = np.linspace(-0.5, 3.6, 821)
crit = np.asarray(decide(jax.vmap(q_of)(jnp.asarray(phis))).component_criterion)
names = jmbs.component_names(model)

fig, ax = plt.subplots(figsize=(8, 3.5))
for comp in ("O0.Fx", "O1.Fx", "O0.Fy"):
    ax.semilogy(phis, crit[:, names.index(comp)], label=comp)
ax.semilogy(phis, np.abs(np.cos(phis)) / np.sqrt(12), "k:", label="|cos phi| / sqrt(12)")
ax.axhline(1e-6, color="grey", lw=0.8)
ax.text(-0.45, 2e-6, "ctol = 1e-6", color="grey")
ax.set(xlabel="crank angle phi [rad]", ylabel="criterion", ylim=(1e-7, 1), title="Component criteria")
ax.legend(ncol=2, fontsize=8)
plt.show()

# %%
# Slopes c_j from the criteria just beside pi/2, and the predicted windows.
near = jnp.stack([q_of(np.pi / 2 - 1e-3)])
c = np.asarray(decide(near).component_criterion)[0] / np.sin(1e-3)
for comp in ("O0.Fx", "O1.Fx"):
    found = [e for e in path.events if comp in e.components]
    width = (found[-1].s - found[0].s) / 2
    predicted = 1e-6 / c[names.index(comp)]
    print(f"{comp}: unique for |phi - pi/2| < {width:.3e} (bisected), {predicted:.3e} (predicted)")
    assert abs(width / predicted - 1) < 1e-3
ratio = c[names.index("O1.Fx")] / c[names.index("O0.Fx")]
print(f"slope of the middle crank over the outer one: {ratio:.6f} (self-stress: 2)")
assert abs(ratio - 2) < 1e-6

# %% [markdown]
# The criteria follow `|cos(phi)|` (the dotted line is the raw self-stress entry
# `1/sqrt(12)`; the equilibration of the matrix changes the slope by a few percent) and
# the bisected windows match the prediction. The `(1, -2, 1)` pattern shows up as a
# window half as wide for `O1`. An isolated verdict like this is real but fragile: one
# micro-radian from upright, a simulation's `Fx` is no longer unique.
#
# Note that `solvability_path` searches between grid points for isolated *rank* drops
# only. An isolated change of a verdict at constant rank, like this one, is seen only
# because the grid contains `pi/2`: with a grid that misses it, the `Fx` components
# would look non-unique everywhere.
#
# ## Random configurations: `jmbs.solvability_sweep`
#
# `jmbs.sample_configurations` walks at random along the mechanism's motion from the
# reference and stays on its branch (by default). Here we ask for its former sampler,
# `method="perturb"`, to see what happens at singular configurations: it perturbs the
# reference configuration at random (0.3 rad and 0.3 body lengths) and assembles each
# sample, and Gauss-Newton is drawn to the flat configurations (it warns how many
# samples landed there; `warn=False` keeps the notebook quiet);
# `jmbs.solvability_sweep` decides all of them in vmapped, jitted chunks.

# %%
start = time.perf_counter()
qs, converged = jmbs.sample_configurations(model, N_SAMPLES, key=0, method="perturb", warn=False)
qs = np.asarray(qs)[np.asarray(converged)]
sweep = jmbs.solvability_sweep(model, qs, progress=False)
print(f"{len(qs)} of {N_SAMPLES} samples assembled and decided in {time.perf_counter() - start:.1f} s")
print(sweep)
angles = np.mod(qs[:, model.coordinate_names.index("crank0.phi")], 2 * np.pi)
flat = np.abs(np.sin(angles)) < 1e-3
print(f"samples that converged onto a flat configuration (phi = 0 or pi): {flat.sum()}")
trusted = sweep.rank_margin >= 2.0
for label, mask in (("margin >= 2 digits", trusted), ("margin < 2 digits", ~trusted)):
    ranks, counts = np.unique(sweep.rank[mask], return_counts=True)
    print(f"{label}: {mask.sum():4d} samples, ranks {dict(zip(ranks.tolist(), counts.tolist()))}")
assert (sweep.rank[trusted] == 11).all()

fig, ax = plt.subplots(figsize=(8, 3.2))
for r in np.unique(sweep.rank):
    sel = sweep.rank == r
    ax.plot(angles[sel], sweep.rank_margin[sel], "o", ms=4, mfc="none", label=f"rank {r}")
ax.axhline(2.0, color="grey", lw=0.8)
ax.set(xlabel="crank angle of the sample, mod 2 pi [rad]", ylabel="rank margin [digits]",
       title="Random configurations")
ax.legend()
plt.show()

# %% [markdown]
# Most samples stay near the upright configuration and have rank 11 with a comfortable
# margin (7 to 8 digits). But almost a third of them (with this seed) converge onto the
# flat singular configurations, `phi = 0` or `pi`, although the perturbations are only
# 0.3 rad: the assembly's Gauss–Newton iterations are attracted there. Newton's
# method reaches a singular configuration only to about the square root of its
# tolerance, so these samples sit about 1e-6 off it and off the constraint manifold.
# Their smallest singular values are 1e-6 to 1e-8, the rank decision has almost no
# margin, and it can come out as 12, *above* the rank of every regular configuration.
# Read the ranks together with `sweep.rank_margin` (reports show a `?` below 2 digits):
# the trustworthy samples all have rank 11.
# The sweep's summary (`generic_rank`, the largest rank met, and `singular`, the
# configurations below it) counts the marginal samples too; filter them first when they
# occur.
#
# ## Many designs: `jmbs.batch_map`
#
# `jmbs.batch_map(fn, batch)` vmaps and jits a function of *one* design and runs it over a
# batch in chunks. Every value given to the builder is a design parameter
# (`model.params()`), and `model.with_params` replaces some of them in traced code.
#
# ### A manufacturing error in the third crank
#
# A redundant constraint needs exact geometry. Move the third crank's coupler pin `B2`
# sideways by `delta` (the crank then leans and is slightly longer): the mechanism no
# longer has a self-stress, but it can no longer move either. The constraint matrix has
# full rank, and its smallest singular value grows linearly with `delta`. Below some
# error the difference is under the rank tolerance (`rtol = 1e-8`, relative to the
# largest singular value), and numerically the mechanism is still a parallelogram.

# %%
def manufacturing(delta):
    m = model.with_params({"B2.point": jnp.array([2.0 + delta, 1.0])})
    d = jmbs.solvability_decisions(m, m.q0, method="svd")
    return {"rank": d.rank, "smallest": d.rank_values[-1], "margin": d.rank_margin}


deltas = np.concatenate([-np.logspace(-1, -12, N_DELTA), np.logspace(-12, -1, N_DELTA)])
start = time.perf_counter()
out = jmbs.batch_map(manufacturing, deltas, progress=False)
print(f"{len(deltas)} designs in {time.perf_counter() - start:.2f} s (compilation included)")

small = np.abs(deltas) < 1e-3
ratio = out["smallest"][small] / np.abs(deltas[small])  # smallest singular value / |delta|
slope = np.median(ratio)
threshold = 1e-8 / slope
full = np.abs(deltas[out["rank"] == 12])
print(f"smallest singular value = {slope:.4f} |delta| for |delta| < 1 mm (relative; spread "
      f"{np.ptp(ratio) / slope:.1e})")
print(f"rank 12 from |delta| = {full.min():.1e} m on; predicted threshold 1e-8 / {slope:.4f} "
      f"= {threshold:.1e} m")
assert (out["rank"][np.abs(deltas) < threshold / 2] == 11).all()
assert (out["rank"][np.abs(deltas) > threshold * 2] == 12).all()

fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
for sign, marker in ((1, "o"), (-1, "x")):
    sel = np.sign(deltas) == sign
    axes[0].semilogx(np.abs(deltas[sel]), out["rank"][sel], marker, mfc="none",
                     label=f"delta {'>' if sign > 0 else '<'} 0")
    axes[1].loglog(np.abs(deltas[sel]), out["smallest"][sel], marker, mfc="none")
axes[1].loglog(np.abs(deltas), slope * np.abs(deltas), "k:", label=f"{slope:.3f} |delta|")
for ax in axes:
    ax.axvline(threshold, color="grey", lw=0.8)
axes[1].axhline(1e-8, color="grey", lw=0.8, ls="--", label="rtol")
axes[0].set(xlabel="|delta| [m]", ylabel="rank of C", yticks=[11, 12], title="rank")
axes[1].set(xlabel="|delta| [m]", ylabel="relative singular value", title="smallest singular value")
axes[0].legend()
axes[1].legend()
plt.show()

# %% [markdown]
# The smallest singular value is linear in the error up to a millimetre (the same slope
# for both signs),
# and the rank decision flips where that line crosses the tolerance, at about 0.1 µm.
# Physically, a real parallelogram with a 0.1 mm error moves only thanks to its joint
# clearances and elasticity, and that is where the "non-unique" reactions of the rigid
# model come from.
#
# ### The static driving torque of thousands of designs
#
# Drive crank 0 (its angle from the upright reference is the driver's coordinate, so time
# plays the angle: `t = phi - pi/2`). At rest, the torque that holds the mechanism against
# gravity has a closed form. Every centre of mass rises by its lever times `sin(phi)`, so
#
# $$ \tau = g\, \cos\varphi \, L\left(\tfrac{m_0 + m_1 + m_2}{2} + m_c\right). $$
#
# The design varies the crank length `L` (every crank and the coupler move together, so
# the geometry stays a parallelogram), the three crank masses, the coupler mass and the
# angle. `jmbs.statics` computes the reactions that hold the mechanism at rest. Under
# `vmap` the rank of `C` cannot be read from values, so we state it: 12 (13 rows, one
# redundant).

# %%
driven = jmbs.examples.parallelogram(motion=lambda t: t)  # a driver "drive" on O0
rank = jmbs.solvability(driven).rank
print(f"driven parallelogram: nc = {driven.nc}, rank {rank}")


def static_torque(p):
    L = p["L"]
    changes = {"coupler.mass": p["m_c"], "coupler.position": jnp.array([1.0, L])}
    for k in range(3):
        changes |= {f"crank{k}.mass": p["m"][k], f"crank{k}.position": jnp.array([k, L / 2]),
                    f"B{k}.point": jnp.array([k, L])}
    m = driven.with_params(changes)
    res = jmbs.statics(m, q_of(p["phi"], L), p["phi"] - jnp.pi / 2, rank=rank)
    r = res.reactions
    return {"tau": r.components("drive", "M"), "in_equilibrium": res.in_equilibrium,
            "unique": r.unique}


rng = np.random.default_rng(1)
designs = {"L": rng.uniform(0.5, 1.5, N_DESIGNS), "m_c": rng.uniform(1.0, 4.0, N_DESIGNS),
           "m": rng.uniform(0.5, 2.0, (N_DESIGNS, 3)), "phi": rng.uniform(0.1, np.pi - 0.1, N_DESIGNS)}
start = time.perf_counter()
res = jmbs.batch_map(static_torque, designs, chunk_size=2048, progress=False)
first = time.perf_counter() - start
start = time.perf_counter()
res = jmbs.batch_map(static_torque, designs, chunk_size=2048, progress=False)
again = time.perf_counter() - start
print(f"{N_DESIGNS} designs: {first:.2f} s with compilation, {again:.2f} s compiled "
      f"({N_DESIGNS / again:,.0f} designs/s)")

lever = designs["L"] * (designs["m"].sum(axis=1) / 2 + designs["m_c"])
tau_ref = G * lever * np.cos(designs["phi"])
err = np.abs(res["tau"] - tau_ref).max()
unique = dict(zip(driven.element_names, res["unique"].mean(axis=0)))
print(f"driving torque vs closed form: max difference {err:.1e} N m "
      f"(torques up to {np.abs(tau_ref).max():.0f} N m)")
print("in equilibrium:", bool(res["in_equilibrium"].all()))
print("fraction of designs where each reaction is unique:", {k: float(v) for k, v in unique.items()})
assert err < 1e-9 and res["in_equilibrium"].all() and unique["drive"] == 1.0

fig, ax = plt.subplots(figsize=(6, 3.4))
ax.plot(designs["phi"], res["tau"] / (G * lever), "o", ms=3, alpha=0.3, label="jmbs, every design")
ax.plot(np.sort(designs["phi"]), np.cos(np.sort(designs["phi"])), "k--", lw=1, label="cos phi")
ax.set(xlabel="crank angle phi [rad]", ylabel="tau / (g L (sum m_k / 2 + m_c))",
       title=f"{N_DESIGNS} designs collapse onto the closed form")
ax.legend()
plt.show()

# %% [markdown]
# The driving torque is unique in every design and matches the closed form to rounding
# level; the pin reactions are non-unique in every design (the self-stress of the
# parallelogram survives any change of length or masses that keeps it a parallelogram).
# After compilation the sweep evaluates tens of thousands of designs per second on two
# CPU cores.
#
# Next: differentiate the driving torque with respect to the design and optimise it
# ([gradient-based design with optax](../design-optax/)).
