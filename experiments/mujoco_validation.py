# %% [markdown]
# # jmbs against MuJoCo, from the same MJCF files
#
# Two mechanisms whose loops MuJoCo closes with `connect` equalities, read by
# `jmbs.from_mjcf` from the bundled files `jmbs/models/mjcf/four_bar.xml` and
# `parallel_gripper.xml`:
#
# - **Trajectories.** MuJoCo (RK4, time step 1e-4 s) with ever stiffer equality
#   constraints (`solref` time constant 1e-2, 2e-3, 4e-4 s) against jmbs (rigid
#   constraints, Dopri5 at 1e-10): the four-bar driven by a 2 N m motor for 2 s, the
#   gripper closed by its two position servos (targets +-0.3 rad) for 1 s. The joint
#   angles must agree to within MuJoCo's constraint softness, and the difference must
#   shrink as MuJoCo's constraints stiffen.
# - **Forces of redundant constraints.** The gripper's jaws each hang on three
#   parallel links: one link per finger is redundant, so the links' axial forces (the
#   connects' x components) are not determined by rigid-body mechanics, while the
#   transverse ones (z) and the servo torques are. MuJoCo holds the gripper at rest,
#   tilted by 0.2 rad so that the jaws' weight pulls along the links, with the
#   impedance `solimp` (d) of the third links' connects varied from 0.5 to 0.999 (the
#   second links' at 0.9): MuJoCo's axial forces change with that setting (one link's
#   from 0.26 N to 0.001 N), its transverse forces and servo torques do not,
#   and jmbs reports exactly that split: x not unique, z unique, with the unique
#   values equal to MuJoCo's. The servo targets are jmbs's holding torques divided by
#   `kp` (the servos as drivers: `from_mjcf(..., servos="driver")`), so that MuJoCo rests
#   in the pose jmbs analyses.
#
# Run: `.venv/bin/python experiments/mujoco_validation.py [--short] [--out DIR]`

# %%
import sys
import warnings
from pathlib import Path

import diffrax
import numpy as np

import jmbs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import format_table, run, save_figure, write_outputs  # noqa: E402

MJCF = Path(jmbs.__file__).parent / "models" / "mjcf"
TIGHT = diffrax.PIDController(rtol=1e-10, atol=1e-10)
TIME_CONSTANTS = (1e-2, 2e-3, 4e-4)  # s, MuJoCo's solref[0] of the equalities
IMPEDANCES = (0.5, 0.9, 0.99, 0.999)  # solimp d of the gripper's third-link connects
TILT = 0.2  # rad: the gripper is held tilted about y, so the jaws' weight loads the links along them


def _mujoco(path: Path):
    import mujoco

    return mujoco, mujoco.MjModel.from_xml_path(str(path))


def _names(mujoco, mj, obj) -> list[str]:
    n = {"joint": mj.njnt, "equality": mj.neq, "actuator": mj.nu}[obj]
    kind = {"joint": mujoco.mjtObj.mjOBJ_JOINT, "equality": mujoco.mjtObj.mjOBJ_EQUALITY,
            "actuator": mujoco.mjtObj.mjOBJ_ACTUATOR}[obj]
    return [mujoco.mj_id2name(mj, kind, i) for i in range(n)]


# %% [markdown]
# ## Trajectories

# %%
def trajectories(file: str, T: float, controls: dict, saves: int, time_constants) -> dict:
    """Joint angles of jmbs and of MuJoCo (per solref time constant) at `saves` times."""
    path = MJCF / file
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jmbs.MJCFWarning)
        model = jmbs.from_mjcf(path, controls=controls)
    ts = np.linspace(0.0, T, saves)
    sol = jmbs.simulate(model, T, saveat=ts, stepsize_controller=TIGHT)
    coords = jmbs.joint_coordinates(model, sol.q)
    mujoco, mj = _mujoco(path)
    joints = _names(mujoco, mj, "joint")
    names = [k for k in coords if k.split(".")[0] in joints]
    columns = [mj.jnt_qposadr[joints.index(k.split(".")[0])] for k in names]
    ours = np.stack([coords[k] for k in names], axis=1)
    runs = []
    for tc in time_constants:
        mj.eq_solref[:] = (tc, 1.0)
        data = mujoco.MjData(mj)
        for name, value in controls.items():
            data.ctrl[_names(mujoco, mj, "actuator").index(name)] = value
        n = round(T / mj.opt.timestep)
        every = n // (saves - 1)
        theirs, violation = [], 0.0
        for k in range(n + 1):
            if k % every == 0:
                theirs.append(np.array(data.qpos[columns]))
            mujoco.mj_step(mj, data)
            eq = data.efc_type[:data.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
            violation = max(violation, float(np.max(np.abs(data.efc_pos[:data.nefc][eq]), initial=0.0)))
        theirs = np.array(theirs)
        runs.append({"time_constant": tc, "max_difference": float(np.max(np.abs(theirs - ours))),
                     "max_violation": violation, "angles": theirs.tolist()})
    return {"file": file, "T": T, "joints": names, "t": ts.tolist(), "jmbs": ours.tolist(), "runs": runs}


# %% [markdown]
# ## Forces of the redundant constraints against MuJoCo's regularisation

# %%
def gripper_forces(impedances, settle: float) -> dict:
    """The gripper held at rest, tilted by `TILT` about y (gravity turned), with its links
    horizontal in its own frame (the pose): jmbs's
    statics with the servos as drivers (the holding torques, unique, give MuJoCo's servo
    targets `torque / kp`), and MuJoCo's connect forces and servo torques at rest, per
    impedance of the third links' connects."""
    path = MJCF / "parallel_gripper.xml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jmbs.MJCFWarning)
        held = jmbs.from_mjcf(path, servos="driver")
        gravity = 9.81 * np.array([np.sin(TILT), 0.0, -np.cos(TILT)])
        held = held.with_params({"gravity": gravity})
        kp = float(jmbs.from_mjcf(path).params()["left_servo.stiffness"])
    report = jmbs.solvability(held)
    rigid = jmbs.statics(held, held.q0).reactions
    unique = {name: dict(zip(held.element(name).components,
                             np.asarray(report.unique_components(name)).tolist()))
              for name in ("left_C2", "left_C3", "left_servo")}
    ours = {name: np.asarray(rigid.components(name, allow_nonunique=True)).tolist()
            for name in ("left_C2", "left_C3", "left_servo", "right_servo")}
    controls = {name: ours[name][0] / kp for name in ("left_servo", "right_servo")}
    mujoco, mj = _mujoco(path)
    equalities, actuators = _names(mujoco, mj, "equality"), _names(mujoco, mj, "actuator")
    mj.eq_solref[:] = (TIME_CONSTANTS[-1], 1.0)  # the stiffest: rest poses close the loops
    mj.opt.gravity[:] = gravity
    runs = []
    for d in impedances:
        mj.eq_solimp[:] = (0.9, 0.9, 0.001, 0.5, 2.0)
        for name in ("left_C3", "right_C3"):
            mj.eq_solimp[equalities.index(name), :2] = d
        data = mujoco.MjData(mj)
        for name, value in controls.items():
            data.ctrl[actuators.index(name)] = value
        for _ in range(round(settle / mj.opt.timestep)):
            mujoco.mj_step(mj, data)
        mujoco.mj_forward(mj, data)
        theirs = {name: jmbs.mjcf_equality_force(mj, data, name).tolist() for name in ("left_C2", "left_C3")}
        runs.append({"d": d, "mujoco": theirs,
                     "servo_torque": float(data.actuator_force[actuators.index("left_servo")]),
                     "rest_speed": float(np.max(np.abs(data.qvel))),
                     "rest_angle": float(np.max(np.abs(data.qpos)))})
    return {"unique": unique, "jmbs": ours, "controls": controls, "runs": runs}


# %%
def main(short: bool = False, out: Path | None = None) -> dict:
    four_bar = trajectories("four_bar.xml", 1.0 if short else 2.0, {"motor": 2.0}, 11,
                            TIME_CONSTANTS[1:] if short else TIME_CONSTANTS)
    gripper = trajectories("parallel_gripper.xml", 0.5 if short else 1.0,
                           {"left_servo": 0.3, "right_servo": -0.3}, 11,
                           TIME_CONSTANTS[1:] if short else TIME_CONSTANTS)
    forces = gripper_forces(IMPEDANCES[1:3] if short else IMPEDANCES, 1.0 if short else 2.0)
    texts = []
    for res in (four_bar, gripper):
        rows = [[f"{r['time_constant']:.0e}", f"{r['max_violation']:.2e}", f"{r['max_difference']:.2e}"]
                for r in res["runs"]]
        texts.append(f"{res['file']}: {res['T']} s, joint angles of MuJoCo (RK4, 1e-4 s) against jmbs\n"
                     + format_table(["solref time constant (s)", "max constraint violation (m)",
                                     "max angle difference (rad)"], rows))
    ours = forces["jmbs"]
    rows = [[f"{r['d']}", f"{r['rest_angle']:.1e}",
             *(f"{r['mujoco'][n][k]:+.6f}" for n in ("left_C2", "left_C3") for k in (0, 2)),
             f"{r['servo_torque']:.6f}"] for r in forces["runs"]]
    rows.append(["jmbs", "0", *(f"{ours[n][k]:+.6f}" for n in ("left_C2", "left_C3") for k in (0, 2)),
                 f"{ours['left_servo'][0]:.6f}"])
    verdicts = ["N" if not forces["unique"][n][c] else "U" for n in ("left_C2", "left_C3")
                for c in ("Fx", "Fz")] + ["U" if forces["unique"]["left_servo"]["M"] else "N"]
    rows.append(["jmbs verdict", "", *verdicts])
    texts.append("parallel gripper held at rest, tilted 0.2 rad, links horizontal in its frame: "
                 "forces on the links (N) and the servo torque against the third links' impedance "
                 "d (MuJoCo), and jmbs (rigid; a non-unique value is the minimum-norm one)\n" + format_table(
                     ["d", "max |qpos|", "C2 Fx (axial)", "C2 Fz", "C3 Fx (axial)", "C3 Fz",
                      "servo torque (N m)"], rows))
    print("\n\n".join(texts))
    results = {"four_bar": four_bar, "gripper": gripper, "forces": forces}
    write_outputs(out, "mujoco_validation", texts, results)
    if out is not None:
        save_figure(out, "mujoco_validation", figure(results))
    return results


def figure(results: dict):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    ax = axes[0]
    for key, marker in (("four_bar", "o"), ("gripper", "s")):
        runs = results[key]["runs"]
        ax.loglog([r["time_constant"] for r in runs], [r["max_difference"] for r in runs],
                  marker=marker, label=f"{results[key]['file']}: angle difference (rad)")
        ax.loglog([r["time_constant"] for r in runs], [r["max_violation"] for r in runs],
                  marker=marker, ls="--", label=f"{results[key]['file']}: MuJoCo's violation (m)")
    ax.set_xlabel("MuJoCo solref time constant (s)")
    ax.set_title("trajectories: MuJoCo against jmbs")
    ax.legend(fontsize=7)
    ax = axes[1]
    fb = results["four_bar"]
    t = np.array(fb["t"])
    ax.plot(t, np.array(fb["jmbs"])[:, 0], "k-", label="jmbs (rigid)")
    for r in fb["runs"]:
        ax.plot(t, np.array(r["angles"])[:, 0], "o", ms=4, mfc="none",
                label=f"MuJoCo, time constant {r['time_constant']:.0e} s")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("crank angle A (rad)")
    ax.set_title("four-bar closed by a connect")
    ax.legend(fontsize=7)
    ax = axes[2]
    runs = results["forces"]["runs"]
    d = [r["d"] for r in runs]
    x = np.arange(len(d))
    for name, color in (("left_C2", "C0"), ("left_C3", "C1")):
        ax.plot(x, [r["mujoco"][name][0] for r in runs], "o-", color=color,
                label=f"{name} Fx (axial): MuJoCo, not unique")
        ax.plot(x, [r["mujoco"][name][2] + 0.1 for r in runs], "s--", color=color,
                label=f"{name} Fz (transverse) + 0.1 N: MuJoCo")
        ax.axhline(results["forces"]["jmbs"][name][2] + 0.1, color=color, lw=0.8)
    ax.plot([], [], "k-", lw=0.8, label="jmbs Fz (unique) + 0.1 N")
    ax.set_xticks(x, [str(v) for v in d])
    ax.set_xlabel("impedance d of the third links' connects (MuJoCo solimp)")
    ax.set_ylabel("force on the link (N)")
    ax.set_title("gripper at rest: redundant vs unique")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    run(main, __doc__)
