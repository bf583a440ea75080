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
# # Loops of a MuJoCo model: which equality forces mean something
#
# ## What you will learn
#
# - how to read a MuJoCo model (MJCF) into jmbs with `jmbs.from_mjcf`, what is mapped
#   and what the `MJCFWarning` lists;
# - why a planar linkage closed by a `connect` is overconstrained in space, and which of
#   its reaction components are unique;
# - how to run MuJoCo and jmbs side by side from the same file (`jmbs.mjcf_state` maps
#   MuJoCo's state), and how MuJoCo converges to jmbs's rigid motion as its constraints
#   stiffen;
# - how MuJoCo's forces in redundant equality constraints follow its regularisation
#   (`solimp`) while the forces jmbs calls unique do not move.
#
# It needs the `mujoco` package (`pip install "jmbs[mujoco]"`). With
# `JMBS_NOTEBOOK_SHORT=1` the runs are shorter.

# %%
import os
import warnings
from pathlib import Path

import diffrax
import matplotlib.pyplot as plt
import mujoco
import numpy as np

import jmbs

SHORT = os.environ.get("JMBS_NOTEBOOK_SHORT") == "1"
MJCF = Path(jmbs.__file__).parent / "models" / "mjcf"
print("MuJoCo", mujoco.__version__, "| jmbs", jmbs.__version__)

# %% [markdown]
# ## A four-bar closed by a `connect`
#
# The bundled file: a crank, a coupler and a rocker on parallel hinges, the loop closed by
# a `connect` equality between the coupler's end and the rocker's tip, a motor on the
# crank. MuJoCo builds the crank-coupler chain as a tree and the rocker as a second
# tree; the `connect` pins them together.

# %%
print((MJCF / "four_bar.xml").read_text())

# %%
four_bar = jmbs.from_mjcf(MJCF / "four_bar.xml", controls={"motor": 2.0})
four_bar

# %% [markdown]
# Every MuJoCo body is a jmbs body (its frame at the centre of mass, with MuJoCo's mass
# and principal inertia), every hinge a revolute joint, the `connect` a spherical joint
# and the motor an actuator whose torque, `gear * ctrl`, is a design parameter:

# %%
{k: float(v) for k, v in four_bar.params().items() if k.startswith(("crank.mass", "motor"))}

# %%
report = jmbs.solvability(four_bar)
print(report)

# %% [markdown]
# 18 constraint rows (three hinges with five each, the connect with three) on 18
# velocities, rank 17: one row is redundant. In space, four parallel hinges already keep
# every link in its plane, so the loop's forces along the hinge axes (`Fz`) and its
# bending moments cannot be told apart by rigid-body mechanics: `N`. The in-plane forces
# `Fx`, `Fy` of every joint are unique, so any correct solver must agree on them.
#
# The redundancy is a property of the mechanism, not of jmbs's coordinates: the same
# count (Grübler in space: 6 x 3 - 5 x 3 - 3 = 0, but the mechanism moves with one degree
# of freedom) tells it.

# %% [markdown]
# ## The same motion as MuJoCo
#
# MuJoCo makes the `connect` soft: its time constant (`solref`) sets how far the loop may
# open. We simulate 1 s (2 s without the short mode) in MuJoCo with RK4 at 1e-4 s for
# three time constants, and in jmbs with rigid constraints at tight tolerances.

# %%
T = 1.0 if SHORT else 2.0
ts = np.linspace(0.0, T, 21)
sol = jmbs.simulate(four_bar, T, saveat=ts,
                    stepsize_controller=diffrax.PIDController(rtol=1e-10, atol=1e-10))
ours = jmbs.joint_coordinates(four_bar, sol.q)["A.angle"]

mj = mujoco.MjModel.from_xml_path(str(MJCF / "four_bar.xml"))
crank = mj.jnt_qposadr[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, "A")]
runs = {}
for tc in (1e-2, 2e-3, 4e-4):
    mj.eq_solref[:] = (tc, 1.0)
    data = mujoco.MjData(mj)
    data.ctrl[0] = 2.0
    steps = round(T / mj.opt.timestep)
    every = steps // (len(ts) - 1)
    angles = []
    for k in range(steps + 1):
        if k % every == 0:
            angles.append(data.qpos[crank])
        mujoco.mj_step(mj, data)
    runs[tc] = np.array(angles)
    print(f"time constant {tc:.0e} s: largest crank-angle difference to jmbs "
          f"{np.max(np.abs(runs[tc] - ours)):.2e} rad")

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
ax1.plot(ts, ours, "k-", label="jmbs (rigid)")
for tc, angles in runs.items():
    ax1.plot(ts, angles, "o", mfc="none", ms=5, label=f"MuJoCo, solref {tc:.0e} s")
ax1.set(xlabel="t (s)", ylabel="crank angle (rad)", title="four-bar driven by 2 N m")
ax1.legend(fontsize=8)
ax2.semilogy(ts, np.abs(runs[2e-3] - ours) + 1e-16, label="solref 2e-3 s")
ax2.semilogy(ts, np.abs(runs[4e-4] - ours) + 1e-16, label="solref 4e-4 s")
ax2.set(xlabel="t (s)", ylabel="|MuJoCo - jmbs| (rad)", title="difference")
ax2.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# The difference shrinks with MuJoCo's constraint violation (about 50x from 2e-3 to 4e-4
# s): MuJoCo converges to the rigid motion.
#
# MuJoCo's state maps to jmbs's with `jmbs.mjcf_state`, for instance to start a jmbs run
# where a MuJoCo run stands, or to evaluate jmbs quantities along a MuJoCo trajectory:

# %%
q, v = jmbs.mjcf_state(four_bar, mj, data)
print("jmbs constraint residual at MuJoCo's final state:",
      f"{np.max(np.abs(np.asarray(jmbs.phi(four_bar, q)))):.1e} m")

# %% [markdown]
# ## A gripper with a redundant link per finger
#
# The bundled `parallel_gripper.xml` carries each jaw on three parallel links (a double
# parallelogram per finger, two `connect`s each), with a position servo on each finger's
# first link. The third link stiffens the finger; it also makes one loop constraint per
# finger redundant. `from_mjcf` maps the servos to MuJoCo's own law (a spring-damper on
# the joint); with `servos="driver"` they hold their joints and their reactions are the
# servo torques. `from_mjcf` warns about what it leaves out (contacts, tendons, limits,
# ...); this file has none of it:

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    held = jmbs.from_mjcf(MJCF / "parallel_gripper.xml", servos="driver")
print([str(w.message) for w in caught] or "no warning: everything in the file is mapped")

# %% [markdown]
# Tilt the gripper by 0.2 rad (gravity is a parameter), so that the jaws' weight pulls
# along the links, and ask which forces the rigid model determines:

# %%
TILT = 0.2
gravity = 9.81 * np.array([np.sin(TILT), 0.0, -np.cos(TILT)])
held = held.with_params({"gravity": gravity})
report = jmbs.solvability(held)
for name in ("left_C2", "left_C3", "left_servo"):
    print(f"{name:10s} {report.component_verdicts(name)}")
static = jmbs.statics(held, held.q0).reactions
torque = float(static.components("left_servo", "M"))
print(f"holding torque {torque:.6f} N m")

# %% [markdown]
# The links' axial forces (`Fx`, the links lie along x) are not unique, the transverse
# ones (`Fz`) and the servo torque are. Now let MuJoCo hold the gripper in the same pose
# (servo targets `torque / kp`, so that the servos rest where jmbs holds them), for
# several impedances `d` of the third links' connects, and read its equality forces:

# %%
mj = mujoco.MjModel.from_xml_path(str(MJCF / "parallel_gripper.xml"))
mj.opt.gravity[:] = gravity
mj.eq_solref[:] = (4e-4, 1.0)
names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_EQUALITY, e) for e in range(mj.neq)]
kp = float(jmbs.from_mjcf(MJCF / "parallel_gripper.xml").params()["left_servo.stiffness"])
impedances = (0.5, 0.99) if SHORT else (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)
forces = {name: [] for name in ("left_C2", "left_C3")}
torques = []
for d in impedances:
    mj.eq_solimp[:] = (0.9, 0.9, 0.001, 0.5, 2.0)
    mj.eq_solimp[[names.index("left_C3"), names.index("right_C3")], :2] = d
    data = mujoco.MjData(mj)
    data.ctrl[:] = (torque / kp, -torque / kp)
    for _ in range(round((1.0 if SHORT else 2.0) / mj.opt.timestep)):
        mujoco.mj_step(mj, data)
    mujoco.mj_forward(mj, data)
    for name in forces:  # MuJoCo's force on the link (body2), as jmbs reports reactions
        forces[name].append(jmbs.mjcf_equality_force(mj, data, name))
    torques.append(data.actuator_force[0])
forces = {k: np.array(v) for k, v in forces.items()}
for k, d in enumerate(impedances):
    print(f"d = {d:<6} C2 Fx {forces['left_C2'][k, 0]:+.4f}  C3 Fx {forces['left_C3'][k, 0]:+.4f}  "
          f"C2 Fz {forces['left_C2'][k, 2]:+.6f}  servo {torques[k]:.6f} N m")
print(f"jmbs      C2 Fz {float(static.components('left_C2', 'Fz')):+.6f}  "
      f"servo {torque:.6f} N m  (unique)")

# %%
fig, ax = plt.subplots(figsize=(7, 4))
x = np.arange(len(impedances))
for name, color in (("left_C2", "C0"), ("left_C3", "C1")):
    ax.plot(x, forces[name][:, 0], "o-", color=color, label=f"{name} Fx, axial (MuJoCo): not unique")
    ax.plot(x, forces[name][:, 2], "s--", color=color, label=f"{name} Fz, transverse (MuJoCo)")
    ax.axhline(float(static.components(name, "Fz")), color=color, lw=0.8)
ax.plot([], [], "k-", lw=0.8, label="jmbs Fz: unique")
ax.set_xticks(x, [str(d) for d in impedances])
ax.set(xlabel="MuJoCo solimp d of the third links' connects", ylabel="force on the link (N)")
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# MuJoCo's axial link forces move by a quarter of a newton with a numerical setting; its
# transverse forces and servo torques stay at jmbs's unique values to six digits. Report,
# plot or optimise only what is unique; to know the split of the axial forces, model the
# links' and pins' compliance (a bushing in place of the redundant pin).
#
# A model read from MJCF is an ordinary jmbs model: it can be swept, differentiated and
# saved as a jmbs model file, in YAML or TOML:

# %%
text = jmbs.io.dumps(held, format="toml")
print("\n".join(text.splitlines()[:24]))
