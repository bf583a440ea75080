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
# # Gradient-based design with optax: tuning a redundant parallelogram
#
# ## What you will learn
#
# - how to write a design objective as a pure function of design parameters with
#   `model.with_params`, through assembly (`jmbs.kinematics`) and inverse dynamics
#   (`jmbs.reactions` with a prepared formulation);
# - that the driving torque of an overconstrained mechanism is a **unique** reaction, and so
#   has a derivative with respect to the design, while a non-unique reaction refuses to be
#   differentiated;
# - how to check gradients against central finite differences and against a closed form;
# - how to optimise a design with `optax.adam`, and how to check the optimum found against
#   an independent search on the closed-form objective.
#
# With `JMBS_NOTEBOOK_SHORT=1` the trajectory has fewer time points and the optimiser runs
# fewer iterations.

# %%
import os
import textwrap
import time

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import optax

import jmbs

SHORT = os.environ.get("JMBS_NOTEBOOK_SHORT") == "1"
N_TIMES = 41 if SHORT else 81  # time points over one period of the motion
N_ITER = 200 if SHORT else 400  # optimiser iterations
G = 9.81
print(f"jmbs {jmbs.__version__}, optax {optax.__version__}, short mode: {SHORT}")

# %% [markdown]
# ## The mechanism and the task
#
# The parallelogram with a third crank (three 1 m cranks of 1 kg, a 2 m coupler of 2 kg,
# upright in the reference configuration; `p = 1` redundant constraint) is driven at
# crank 0's ground pin through one period of an oscillation,
#
# $$ \varphi(t) = \tfrac{\pi}{2} + A \sin \omega t, \qquad A = 1\ \mathrm{rad},\quad
# \omega = \pi/2\ \mathrm{rad/s}. $$
#
# We want to reduce the driving torque needed, by changing crank 0: its mass `m0` and the
# position `s0` of its centre of mass along the crank (0.5 m, mid-length, nominally;
# negative values mean a counterweight on an extension below the pivot). A heavier crank
# is penalised. The objective is
#
# $$ J(m_0, s_0) = \frac{1}{T}\int_0^T \tau^2\, dt + c\, m_0^2, \qquad
# c = 10\ \mathrm{N^2 m^2 / kg^2}, $$
#
# with the mean over the saved time points for the integral.

# %%
A, OMEGA, T, C_MASS = 1.0, np.pi / 2, 4.0, 10.0

# the parallelogram of the first notebook, crank 0 driven at O0 by a design-parameter motion
model = jmbs.examples.parallelogram(motion=lambda t, p: p["amp"] * jnp.sin(p["omega"] * t),
                                    params={"amp": A, "omega": OMEGA})
print(jmbs.solvability(model))

# %% [markdown]
# The driving torque is unique (the self-stress of the parallelogram loads the cranks
# along their axes only, which has no moment about the driven pin); the pin reactions are
# not.
#
# ## The objective as a function of the design
#
# `model.with_params` returns the model with the new crank-0 mass and centre of mass
# (its joints stay where they are in the reference configuration, so they move relative
# to the centre of mass). `jmbs.kinematics` assembles the driven motion at every time
# point (and is differentiated implicitly through that assembly), and `jmbs.reactions`
# gives the torque. Under `jax.grad` the model is traced, so the formulation's rank
# decision is made once, on the nominal model, with `prepare`.

# %%
ts = jnp.linspace(0.0, T, N_TIMES)
formulation = jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0)


def design(x):
    """The model with crank 0's mass x[0] and centre of mass at height x[1] (reference)."""
    return model.with_params({"crank0.mass": x[0], "crank0.position": jnp.stack([0.0, x[1]])})


def torque_history(x):
    m = design(x)
    kin = jmbs.kinematics(m, ts)

    def torque(q, v, t):
        return jmbs.reactions(m, q, v, t, formulation).reactions.components("drive", "M")

    return jax.vmap(torque)(kin.q, kin.v, ts)


def objective(x):
    return jnp.mean(torque_history(x) ** 2) + C_MASS * x[0] ** 2


x0 = jnp.array([1.0, 0.5])
start = time.perf_counter()
tau0 = np.asarray(torque_history(x0))
print(f"torque history at the nominal design: {time.perf_counter() - start:.1f} s, "
      f"RMS {np.sqrt(np.mean(tau0**2)):.2f} N m")

# %% [markdown]
# ### The closed form
#
# The parallelogram moves with one angle; its kinetic and potential energies give the
# driving torque
#
# $$ \tau = I \ddot\varphi + g S \cos\varphi, \qquad
# I = J_0 + m_0 s_0^2 + 2\left(\tfrac{1}{12} + \tfrac{1}{4}\right) + m_c L^2, \qquad
# S = m_0 s_0 + 2 \cdot \tfrac{1}{2} + m_c L, $$
#
# with `J0 = 1/12 kg m²` crank 0's own inertia and `m_c L = 2 kg m`. We write it in JAX
# too. It shares nothing with jmbs except the parameter values:

# %%
ts_np = np.asarray(ts)
phi = np.pi / 2 + A * np.sin(OMEGA * ts_np)
phi_dd = -A * OMEGA**2 * np.sin(OMEGA * ts_np)


def inertia_and_lever(x):
    m0, s0 = x[0], x[1]
    return 1 / 12 + m0 * s0**2 + 2 * (1 / 12 + 1 / 4) + 2.0, m0 * s0 + 2 * 0.5 + 2.0


def torque_closed_form(x):
    inertia, lever = inertia_and_lever(x)
    return inertia * phi_dd + G * lever * jnp.cos(phi)


def objective_closed_form(x):
    return jnp.mean(torque_closed_form(x) ** 2) + C_MASS * x[0] ** 2


err = np.abs(tau0 - np.asarray(torque_closed_form(x0))).max()
print(f"jmbs vs closed form: max torque difference {err:.1e} N m")
assert err < 1e-9

# %% [markdown]
# ## Gradients
#
# `jax.grad` of the jmbs objective, central finite differences of the same function, and
# `jax.grad` of the closed form:

# %%
value_and_grad = jax.jit(jax.value_and_grad(objective))
start = time.perf_counter()
J0, g_ad = value_and_grad(x0)
print(f"value and gradient, compiled and run: {time.perf_counter() - start:.1f} s")
objective_jit = jax.jit(objective)
h = 1e-6
g_fd = np.array([(objective_jit(x0 + h * e) - objective_jit(x0 - h * e)) / (2 * h) for e in jnp.eye(2)])
g_cf = np.asarray(jax.grad(objective_closed_form)(x0))
print(f"J(x0) = {float(J0):.4f}")
for label, g in (("jax.grad, jmbs", g_ad), ("finite differences", g_fd), ("jax.grad, closed form", g_cf)):
    print(f"{label:22} dJ/dm0 = {float(g[0]):12.6f}   dJ/ds0 = {float(g[1]):12.6f}")
rel_fd = np.abs(np.asarray(g_ad) - g_fd).max() / np.abs(g_fd).max()
rel_cf = np.abs(np.asarray(g_ad) - g_cf).max() / np.abs(g_cf).max()
print(f"relative difference: {rel_fd:.1e} to finite differences, {rel_cf:.1e} to the closed form")
assert rel_fd < 1e-6 and rel_cf < 1e-10

# %% [markdown]
# The gradient through assembly and inverse dynamics matches the closed form to rounding
# level; finite differences agree to their truncation and cancellation error. The
# sensitivity of the whole torque history is a Jacobian, `jax.jacfwd`, here against the
# closed-form derivatives
# `d tau / d m0 = s0^2 phi_dd + g s0 cos(phi)` and
# `d tau / d s0 = 2 m0 s0 phi_dd + g m0 cos(phi)`:

# %%
jac = np.asarray(jax.jit(jax.jacfwd(torque_history))(x0))  # (N_TIMES, 2)
m0, s0 = 1.0, 0.5
jac_cf = np.stack([s0**2 * phi_dd + G * s0 * np.cos(phi),
                   2 * m0 * s0 * phi_dd + G * m0 * np.cos(phi)], axis=1)
print(f"Jacobian of the torque history vs closed form: max difference {np.abs(jac - jac_cf).max():.1e}")
assert np.abs(jac - jac_cf).max() < 1e-9

fig, ax = plt.subplots(figsize=(7, 3))
ax.plot(ts_np, jac[:, 0], label="d tau / d m0 [N m / kg]")
ax.plot(ts_np, jac[:, 1], label="d tau / d s0 [N]")
ax.plot(ts_np[::4], jac_cf[::4, 0], "ko", mfc="none", ms=5, label="closed form")
ax.plot(ts_np[::4], jac_cf[::4, 1], "ko", mfc="none", ms=5)
ax.set(xlabel="t [s]", title="Sensitivity of the driving torque")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ### A non-unique reaction has no derivative
#
# The vertical force in the ground pin of crank 0 is not unique: its value, and its
# derivative, belong to the formulation that picked one of infinitely many
# solutions. Asking for the gradient is an error that says so. `allow_nonunique=True`
# gives the derivative of this formulation's (minimum-norm) value for whoever wants it
# knowingly.

# %%
def pin_force(s0, allow_nonunique=False):
    """O0.Fy on crank 0 at t = 1 s of the driven motion (crank 0 at 1 + pi/2 rad)."""
    m = design(jnp.stack([1.0, s0]))
    t = jnp.array([1.0])
    kin = jmbs.kinematics(m, t)
    r = jmbs.reactions(m, kin.q[0], kin.v[0], t[0], formulation).reactions
    return r.components("O0", "Fy", allow_nonunique=allow_nonunique)


try:
    jax.grad(pin_force)(0.5)
except Exception as error:  # equinox.EquinoxRuntimeError
    message = str(error)
    message = message[: message.find("knowingly.") + len("knowingly.")]
    print(type(error).__name__ + ":\n" + textwrap.fill(message, 100))

derivative = float(jax.grad(lambda s0: pin_force(s0, allow_nonunique=True))(0.5))
print(f"\nd(O0.Fy)/ds0 of the minimum-norm multipliers (allow_nonunique=True): {derivative:.4f} N/m")


# %% [markdown]
# ## Optimisation with optax
#
# The mass must stay positive, so the optimiser works on `z = (log m0, s0)`. Adam with a
# learning rate decaying exponentially from 0.1 to 0.01 over the run:

# %%
def objective_z(z):
    return objective(jnp.stack([jnp.exp(z[0]), z[1]]))


step = jax.jit(jax.value_and_grad(objective_z))
optimizer = optax.adam(optax.exponential_decay(0.1, transition_steps=N_ITER, decay_rate=0.1))
z = jnp.array([0.0, 0.5])  # the nominal design: m0 = 1 kg, s0 = 0.5 m
state = optimizer.init(z)
history, path = [], [np.array([1.0, 0.5])]
start = time.perf_counter()
for _ in range(N_ITER):
    value, grad = step(z)
    updates, state = optimizer.update(grad, state)
    z = optax.apply_updates(z, updates)
    history.append(float(value))
    path.append(np.array([np.exp(float(z[0])), float(z[1])]))
x_opt = path[-1]
J_opt = float(objective(jnp.asarray(x_opt)))
print(f"{N_ITER} iterations in {time.perf_counter() - start:.1f} s (compilation included)")
print(f"optimum found: m0 = {x_opt[0]:.4f} kg, s0 = {x_opt[1]:.4f} m, J = {J_opt:.4f} "
      f"(nominal {history[0]:.2f})")

# %% [markdown]
# ### An independent check of the optimum
#
# The closed-form objective is cheap, so a brute-force search finds its minimum without
# gradients: a grid over the design space, then finer grids around the best point.

# %%
def closed_form_on_grid(m0, s0):
    inertia = 1 / 12 + m0 * s0**2 + 2 * (1 / 12 + 1 / 4) + 2.0
    lever = m0 * s0 + 3.0
    tau = inertia[..., None] * phi_dd + G * lever[..., None] * np.cos(phi)
    return np.mean(tau**2, axis=-1) + C_MASS * m0**2


center, half = np.array([4.0, -1.5]), np.array([4.0, 2.5])
for _ in range(6):  # zoom in: each grid is 201 x 201, 4 times finer than the last
    mm, ss = np.meshgrid(*(np.linspace(c - w, c + w, 201) for c, w in zip(center, half)))
    mm = np.maximum(mm, 1e-3)
    values = closed_form_on_grid(mm, ss)
    i = np.unravel_index(values.argmin(), values.shape)
    center, half = np.array([mm[i], ss[i]]), half / 4
x_ref, J_ref = center, float(values[i])
print(f"grid search on the closed form: m0 = {x_ref[0]:.4f} kg, s0 = {x_ref[1]:.4f} m, J = {J_ref:.4f}")
print(f"optax on jmbs:                  m0 = {x_opt[0]:.4f} kg, s0 = {x_opt[1]:.4f} m, J = {J_opt:.4f}")
print(f"relative difference of J: {(J_opt - J_ref) / J_ref:.1e}; of the design: "
      f"{np.abs(x_opt - x_ref).max():.1e}")
assert (J_opt - J_ref) / J_ref < 1e-3 and np.abs(x_opt - x_ref).max() < 0.05

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
gap = np.maximum(np.array(history) / J_ref - 1.0, 1e-16)
axes[0].semilogy(gap)
axes[0].set(xlabel="iteration", ylabel="J / J_min - 1",
            title=f"Objective history (J_min = {J_ref:.2f} N² m², closed form)")

mm, ss = np.meshgrid(np.linspace(0.2, 6.0, 200), np.linspace(-3.0, 1.0, 200))
contours = axes[1].contour(mm, ss, np.log10(closed_form_on_grid(mm, ss)), levels=20, cmap="viridis")
fig.colorbar(contours, ax=axes[1], label="log10 J (closed form)")
p = np.array(path)
axes[1].plot(p[:, 0], p[:, 1], "r.-", ms=2, lw=1, label="optax iterates")
axes[1].plot(*x_ref, "k+", ms=12, mew=2, label="grid-search minimum")
axes[1].set(xlabel="m0 [kg]", ylabel="s0 [m]", title="Design space")
axes[1].legend(fontsize=8, loc="upper right")
plt.show()

# %% [markdown]
# ## What the optimiser found
#
# Compare the torque histories of the nominal and the optimised design, both from jmbs,
# with the closed form as markers:

# %%
tau_opt = np.asarray(torque_history(jnp.asarray(x_opt)))
inertia, lever = (float(v) for v in inertia_and_lever(x_opt))
rms0, rms_opt = np.sqrt(np.mean(tau0**2)), np.sqrt(np.mean(tau_opt**2))
print(f"RMS torque: nominal {rms0:.2f} N m, optimised {rms_opt:.2f} N m")
print(f"optimised: I = {inertia:.3f} kg m², S = {lever:.3f} kg m; pendulum frequency sqrt(-g S / I) = "
      f"{np.sqrt(max(-G * lever, 0.0) / inertia):.3f} rad/s, drive {OMEGA:.3f} rad/s")
assert np.abs(tau_opt - np.asarray(torque_closed_form(jnp.asarray(x_opt)))).max() < 1e-9

fig, ax = plt.subplots(figsize=(7, 3))
ax.plot(ts_np, tau0, label="nominal design")
ax.plot(ts_np, tau_opt, label="optimised design")
ax.plot(ts_np[::3], np.asarray(torque_closed_form(x0))[::3], "ko", mfc="none", ms=4, label="closed form")
ax.plot(ts_np[::3], np.asarray(torque_closed_form(jnp.asarray(x_opt)))[::3], "ko", mfc="none", ms=4)
ax.set(xlabel="t [s]", ylabel="driving torque [N m]", title="Driving torque over one period")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# The optimiser did more than balance the mechanism against gravity. Balancing would make
# `S = 0`. Instead the centre of mass of crank 0 went far below its pivot, and the lever
# `S` became *negative*: the mechanism now hangs as a pendulum. Its natural frequency
# `sqrt(-g S / I)` comes close to the drive's `omega`, so gravity supplies most of the
# torque that accelerates the mechanism. The mass penalty keeps the counterweight from
# growing further. For small amplitudes this "resonant" design would follow the
# closed-form condition `g S = -I omega^2` exactly; with `A = 1 rad` and the mass penalty
# the optimum sits a little below that frequency. Both numbers are printed above.
#
# All of this went through a mechanism with a redundant constraint. Its driving torque is
# unique, so the derivative is a property of the mechanism, the same in every
# formulation, and it matched finite differences and the closed form.
