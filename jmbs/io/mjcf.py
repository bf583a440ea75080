"""MuJoCo models (MJCF) as jmbs models, through the `mujoco` package (host-side only).

MuJoCo compiles the file (defaults, frames, inertias from geoms); jmbs reads the compiled
model at its default pose (`qpos0`, or a keyframe) and maps it element by element:

| MuJoCo | jmbs |
|---|---|
| body (inertial frame, mass, principal inertia) | body (frame at the centre of mass) |
| body without joints | weld to its parent (a massless one is a frame: its children hang on its parent) |
| hinge / slide / ball joint | revolute / prismatic / spherical joint |
| free joint | nothing: the body is free |
| hinge + slide on one axis, two or three hinges through one point | cylindrical, universal, spherical joint |
| `connect` / `weld` equality | spherical joint / weld |
| `joint` equality | a holonomic constraint `c1 = p(c2)` (a driver when `joint2` is absent) |
| motor | actuator (force = gear x ctrl) |
| position / velocity / affine actuator | a spring-damper on the joint (+ actuator); with
  `servos="driver"`, a position servo is a driver |
| joint stiffness, damping | rotational or slide spring-damper |
| gravity | gravity |

Everything else (contacts, tendons, limits, armature, friction loss, sensors, ...) is
listed in one `MJCFWarning`, never dropped silently.

URDF robots (`from_urdf`) take the same path: MuJoCo compiles the URDF, this module maps
the compiled model, and `io/urdf.py` reads the URDF's own tree to speak of its links and
joints in the notes and errors.
"""

from dataclasses import dataclass, field
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from .._bodies import point, rotate
from .._builder.builder import ModelBuilder, check_closed
from .._expression import Expression
from .._misc import warn_user
from .._model import GROUND, Model
from .._rotations import quat_multiply, quat_to_rot, rot_to_quat
from .urdf import ONE_COORDINATE, URDFRobot, compile_urdf, is_urdf, read_urdf

__all__ = ["MJCFWarning", "from_mjcf", "from_urdf", "mjcf_equality_force", "mjcf_state"]

# MuJoCo's enums, by value (mjtJoint, mjtEq, mjtTrn, mjtGain, mjtBias, mjtObj)
FREE, BALL, SLIDE, HINGE = 0, 1, 2, 3
EQ_CONNECT, EQ_WELD, EQ_JOINT = 0, 1, 2
OBJ_SITE = 6
TOL = 1e-9


class MJCFWarning(UserWarning):
    """Parts of an MJCF model that jmbs does not map (listed one per line)."""


@dataclass
class _Mapping:
    """What the reading found, in order: the builder, names, and what was left out."""

    b: ModelBuilder
    body: dict[int, str] = field(default_factory=dict)  # MuJoCo body id -> jmbs body (moving)
    pose: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # body -> (r, R)
    joint: dict[int, tuple[str, str, str, str]] = field(default_factory=dict)
    # MuJoCo joint id -> (jmbs element, coordinate, parent body, child body)
    skipped: list[str] = field(default_factory=list)
    renamed: list[str] = field(default_factory=list)
    taken: set[str] = field(default_factory=lambda: {GROUND})
    urdf: "URDFRobot | None" = None  # read from URDF: its words in the notes

    def name(self, wanted: str, kind: str) -> str:
        """`wanted`, or `wanted_<kind>` when a body or element already has it."""
        out = wanted
        k = 1
        while out in self.taken:
            out = f"{wanted}_{kind}" if k == 1 else f"{wanted}_{kind}{k}"
            k += 1
        if out != wanted:
            self.renamed.append(f"{kind} {wanted!r} is {out!r} (the name was taken)")
        self.taken.add(out)
        return out


def from_mjcf(source: "str | Path", *, keyframe: "int | str | None" = None,
              controls: "dict[str, float | str] | None" = None, servos: str = "force",
              warn: bool = True) -> Model:
    """A jmbs `Model` from a MuJoCo model (MJCF), compiled by the `mujoco` package.

    **Arguments:**
    - `source`: a path to an MJCF file, or the XML text itself. A URDF file (a `.urdf`
      path or a `<robot>` root) is passed on to `jmbs.from_urdf`.
    - `keyframe`: the name or index of a keyframe whose `qpos`, `qvel` and `ctrl` give the
      reference configuration, the initial velocities and the controls (default:
      `qpos0`, zero velocities, zero controls).
    - `controls`: the control value of actuators by name (overrides the keyframe). A
      position servo mapped to a driver also takes text, an expression of `t`.
    - `servos`: `"force"` (default): a position servo is MuJoCo's own law, a spring-damper
      on its joint (`kp`, `kv`, rest at the target); `"driver"`: it holds its joint at the
      target exactly (a driver: its reaction is the servo's torque or force).
    - `warn`: issue the `MJCFWarning` listing what is not mapped.

    **Returns:** the model, with MuJoCo's names (unnamed elements are `<kind><index>`,
    e.g. `joint3`; a name taken by another kind gets `_<kind>` appended). The reference
    configuration is MuJoCo's pose, so joint coordinates are measured from it; a loop
    that the pose does not close is assembled (with a note in the warning).

    **Raises:** `ImportError` without the `mujoco` package (`pip install jmbs[mujoco]`),
    `ValueError` naming the MuJoCo element that jmbs cannot represent (a combination of
    joints on one body with no jmbs joint, a free joint below another body).
    """
    mujoco = _mujoco("from_mjcf")
    if servos not in ("force", "driver"):
        raise ValueError(f"servos must be 'force' or 'driver', got {servos!r}")
    if is_urdf(source):
        if keyframe is not None or controls:
            raise ValueError(f"{source if len(str(source)) < 80 else 'URDF'}: a URDF file has no "
                             "keyframes and no actuators; read it with jmbs.from_urdf")
        return _urdf_model(mujoco, source, None, warn)
    mj, label = _compile(mujoco, source)
    return _read(mujoco, mj, label, keyframe=keyframe, controls=controls, servos=servos, warn=warn)


def from_urdf(source: "str | Path", *, positions: "dict[str, float] | None" = None,
              warn: bool = True) -> Model:
    """A jmbs `Model` from a robot description in URDF, compiled by MuJoCo's compiler (the
    `mujoco` package) and mapped as `from_mjcf` maps an MJCF model.

    **Arguments:**
    - `source`: a path to a URDF file, or the XML text itself. Mesh filenames are read
      relative to the file's folder (`package://` is not resolved: write a relative path).
    - `positions`: joint positions (rad or m) of the reference configuration, by URDF
      joint name (default: every joint at 0, the URDF's own pose).
    - `warn`: issue the `MJCFWarning` listing what is not mapped or changed (collision
      geometry, joint limits, friction, links fused by fixed joints).

    **Returns:** the model: the root link is the ground (MuJoCo fixes it to the world);
    every moving link is a body named after it, with the links that fixed joints attach to
    it (their masses and inertias added); each revolute or continuous joint is a revolute
    joint, each prismatic one a prismatic joint, with the URDF's name; a floating joint
    from the root leaves its link free; joint damping is a rotational or slide damper
    (`<joint>_damper`); a `mimic` is a constraint `<joint>_mimic`. Gravity is MuJoCo's
    default, `(0, 0, -9.81)` (URDF has none): change it with
    `model.with_params({"gravity": ...})`.

    **Raises:** `ImportError` without the `mujoco` package (`pip install jmbs[mujoco]`),
    `ValueError` naming the URDF link or joint: a robot with no joint that moves, several
    root links, a joint naming an unknown link, a moving link without mass, an inertia no
    rigid body has, a planar joint, a floating joint below a moving link, a missing mesh.
    """
    return _urdf_model(_mujoco("from_urdf"), source, positions, warn)


def _urdf_model(mujoco, source, positions, warn: bool) -> Model:
    robot, _ = read_urdf(source)
    robot.check_tree()
    mj = compile_urdf(mujoco, source, robot)
    qpos = np.array(mj.qpos0)
    for joint, value in (positions or {}).items():
        j = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, joint)
        movable = [n for n, (kind, _, _) in robot.joints.items() if kind in ONE_COORDINATE]
        if joint not in movable or j < 0:
            raise ValueError(f"{robot.label}: positions: {joint!r} is no revolute, continuous or "
                             f"prismatic joint of the URDF robot; joints: {', '.join(movable)}")
        value = float(value)
        if not np.isfinite(value):
            raise ValueError(f"{robot.label}: positions: joint {joint!r}: {value} is not finite")
        qpos[mj.jnt_qposadr[j]] = value
    return _read(mujoco, mj, robot.label, warn=warn, qpos=qpos, urdf=robot)


def _mujoco(caller: str):
    try:
        import mujoco
    except ImportError:
        raise ImportError(f"jmbs.{caller} needs the mujoco package: pip install 'jmbs[mujoco]'") from None
    return mujoco


def _read(mujoco, mj, label: str, *, keyframe=None, controls=None, servos: str = "force",
          warn: bool = True, qpos=None, urdf: "URDFRobot | None" = None) -> Model:
    """The jmbs model of MuJoCo's compiled model `mj` (from MJCF, or from `urdf`)."""
    data = mujoco.MjData(mj)
    ctrl = _pose(mujoco, mj, data, keyframe, label, qpos)
    names = _Names(mujoco, mj)
    for key, value in (controls or {}).items():
        ids = [a for a in range(mj.nu) if names.of("actuator", a) == key]
        if not ids:
            raise ValueError(f"{label}: controls: no actuator {key!r}; actuators: "
                             f"{[names.of('actuator', a) for a in range(mj.nu)]}")
        ctrl[ids[0]] = value

    gravity = np.zeros(3) if mj.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_GRAVITY) \
        else np.array(mj.opt.gravity)
    out = _Mapping(ModelBuilder(dim=3, gravity=gravity), urdf=urdf)
    _bodies(mujoco, mj, data, names, out, label)
    if not out.body:
        raise ValueError(f"{label}: no body moves: every body is fixed to the world (a body moves "
                         "with a joint, or a free joint); add a <joint> to a body with mass")
    _equalities(mujoco, mj, data, names, out, label)
    _joint_forces(mj, data, names, out)
    _actuators(mujoco, mj, data, names, out, ctrl, servos, label)
    _not_mapped(mujoco, mj, names, out)
    model = out.b.build(check=False)
    try:
        check_closed(model, model.q0)
    except ValueError as e:
        out.skipped.append(f"the pose does not close the loops ({e}); jmbs assembled it")
        model = out.b.build(assemble=True)
    if warn and (out.skipped or out.renamed):
        lines = [f"  - {s}" for s in out.skipped + out.renamed]
        warn_user(f"{label}: not mapped into jmbs, or changed:\n" + "\n".join(lines), MJCFWarning)
    return model


def mjcf_state(model: Model, mj_model, mj_data) -> tuple[np.ndarray, np.ndarray]:
    """The jmbs state `(q, v)` of `model` (made by `from_mjcf` from `mj_model`) at MuJoCo's
    state `mj_data` (its `qpos`, `qvel`): each body's centre of mass, rotation and velocity,
    read from MuJoCo's kinematics. For comparing trajectories and forces with MuJoCo, or
    starting jmbs where a MuJoCo run stands."""
    import mujoco

    mujoco.mj_forward(mj_model, mj_data)
    q, v = [], []
    for spec in model.body_specs:
        i = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_BODY, spec.name)
        if i < 0 and spec.name.endswith("_body"):  # renamed by from_mjcf
            i = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_BODY, spec.name.removesuffix("_body"))
        if i < 0 and spec.name.startswith("body") and spec.name[4:].isdigit():
            i = int(spec.name[4:])
        if not 0 < i < mj_model.nbody:
            raise ValueError(f"jmbs body {spec.name!r} is no body of this MuJoCo model; pass the "
                             "MuJoCo model the jmbs model was made from")
        R = np.array(mj_data.ximat[i]).reshape(3, 3)
        world, local = np.zeros(6), np.zeros(6)
        mujoco.mj_objectVelocity(mj_model, mj_data, mujoco.mjtObj.mjOBJ_BODY, i, world, 0)
        mujoco.mj_objectVelocity(mj_model, mj_data, mujoco.mjtObj.mjOBJ_BODY, i, local, 1)
        q += [np.array(mj_data.xipos[i]), np.asarray(rot_to_quat(jnp.asarray(R)))]
        v += [world[3:], local[:3]]
    return np.concatenate(q), np.concatenate(v)


def mjcf_equality_force(mj_model, mj_data, name: str) -> np.ndarray:
    """MuJoCo's constraint force of the equality `name` at `mj_data` (after `mj_forward`
    or a step), as jmbs reports a reaction: on body2, global frame (a `connect`: the
    force `(3,)`; a `weld`: force then torque `(6,)`). For comparing MuJoCo's forces with
    jmbs's reactions (`from_mjcf` names the element after the equality)."""
    import mujoco

    e = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_EQUALITY, name)
    if e < 0:
        raise ValueError(f"the MuJoCo model has no equality {name!r}")
    n = mj_data.nefc
    rows = np.flatnonzero((mj_data.efc_type[:n] == mujoco.mjtConstraint.mjCNSTR_EQUALITY)
                          & (mj_data.efc_id[:n] == e))
    return -np.asarray(mj_data.efc_force[rows])


# ----------------------------------------------------------------------------------
# Reading MuJoCo's compiled model
# ----------------------------------------------------------------------------------


def _compile(mujoco, source):
    text = str(source)
    try:
        if text.lstrip().startswith("<"):
            return mujoco.MjModel.from_xml_string(text), "MJCF"
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"{source}: no such file (give an MJCF path or the XML text)")
        return mujoco.MjModel.from_xml_path(str(path)), str(path)
    except ValueError as e:
        if "no such file" in str(e):
            raise
        raise ValueError(f"MuJoCo cannot compile {text if len(text) < 80 else 'the MJCF'}: "
                         f"{str(e).strip()}") from None


def _pose(mujoco, mj, data, keyframe, label, qpos=None) -> list:
    """Set the reference pose (`qpos`, a keyframe or qpos0) and return the controls."""
    ctrl: list = [0.0] * mj.nu
    if keyframe is not None:
        names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_KEY, k) for k in range(mj.nkey)]
        known = ("its keyframes: " + ", ".join(f"{k} ({n})" if n else str(k) for k, n in enumerate(names))
                 if names else "it has no <keyframe>")
        if isinstance(keyframe, str):
            k = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_KEY, keyframe)
            if k < 0:
                raise ValueError(f"{label}: no keyframe {keyframe!r}; {known}")
        else:
            k = int(keyframe)
            if not 0 <= k < mj.nkey:
                raise ValueError(f"{label}: no keyframe {k}; {known}")
        data.qpos[:], data.qvel[:] = mj.key_qpos[k], mj.key_qvel[k]
        ctrl = [float(c) for c in mj.key_ctrl[k]]
    else:
        data.qpos[:] = mj.qpos0 if qpos is None else qpos
    mujoco.mj_forward(mj, data)
    return ctrl


class _Names:
    def __init__(self, mujoco, mj):
        self.mujoco, self.mj = mujoco, mj
        self.objs = {"body": mujoco.mjtObj.mjOBJ_BODY, "joint": mujoco.mjtObj.mjOBJ_JOINT,
                     "equality": mujoco.mjtObj.mjOBJ_EQUALITY,
                     "actuator": mujoco.mjtObj.mjOBJ_ACTUATOR, "tendon": mujoco.mjtObj.mjOBJ_TENDON,
                     "site": mujoco.mjtObj.mjOBJ_SITE}

    def of(self, kind: str, i: int) -> str:
        return self.mujoco.mj_id2name(self.mj, self.objs[kind], i) or f"{kind}{i}"


def _bodies(mujoco, mj, data, names, out: _Mapping, label) -> None:
    """Bodies and the joints to their parents (MuJoCo's tree)."""
    b = out.b
    static = {0}  # bodies that are part of the ground
    frames: dict[int, int] = {}  # massless bodies without joints (MuJoCo allows no other): parent
    for i in range(1, mj.nbody):  # parents come before children in MuJoCo's order
        p = int(mj.body_parentid[i])
        p = frames.get(p, p)
        p = 0 if p in static else p
        joints = list(range(mj.body_jntadr[i], mj.body_jntadr[i] + mj.body_jntnum[i]))
        if mj.body_mocapid[i] >= 0:
            out.skipped.append(f"body {names.of('body', i)!r} is a mocap body: fixed to the ground "
                               "at its pose")
            static.add(i)
            continue
        if p == 0 and not joints:
            static.add(i)
            continue
        if mj.body_mass[i] <= 0 and not joints:
            frames[i] = p  # a frame: its children hang on its parent
            continue
        name = out.name(names.of("body", i), "body")
        r, R = np.array(data.xipos[i]), np.array(data.ximat[i]).reshape(3, 3)
        b.add_body(name, mass=float(mj.body_mass[i]), inertia=np.array(mj.body_inertia[i]),
                   position=r, rotation=R, **_velocity(mujoco, mj, data, i))
        out.body[i], out.pose[name] = name, (r, R)
        _joint(mj, data, names, out, label, out.body.get(p, GROUND), name, joints, i)


def _velocity(mujoco, mj, data, i) -> dict:
    v = np.zeros(6)
    mujoco.mj_objectVelocity(mj, data, mujoco.mjtObj.mjOBJ_BODY, i, v, 0)  # at the COM
    if not np.any(v):
        return {}
    return {"velocity": v[3:], "angular_velocity": v[:3]}


def _joint(mj, data, names, out: _Mapping, label, parent: str, child: str, joints: list[int],
           body: int) -> None:
    """The jmbs joint for MuJoCo's joints `joints` between `parent` and `child`."""
    b = out.b
    kinds = [int(mj.jnt_type[j]) for j in joints]
    anchor = [np.array(data.xanchor[j]) for j in joints]
    axis = [np.array(data.xaxis[j]) for j in joints]
    jname = "_".join(names.of("joint", j) for j in joints)
    where = f"{label}: body {names.of('body', body)!r}"
    if not joints:
        name = out.name(f"{child}_weld", "weld")
        b.add_weld(name, parent, child, point=np.array(data.xpos[body]))
        return
    if FREE in kinds:
        if kinds != [FREE] or parent != GROUND:
            raise ValueError(f"{where}: a free joint must be the only joint of a body of the world")
        return
    same_point = all(np.linalg.norm(a - anchor[0]) < TOL * (1 + np.linalg.norm(a)) for a in anchor)
    name = out.name(jname, "joint")
    if kinds == [HINGE]:
        b.add_revolute(name, parent, child, anchor[0], axis=axis[0])
        out.joint[joints[0]] = (name, "angle", parent, child)
    elif kinds == [SLIDE]:
        b.add_prismatic(name, parent, child, anchor[0], axis=axis[0])
        out.joint[joints[0]] = (name, "slide", parent, child)
    elif kinds == [BALL]:
        b.add_spherical(name, parent, child, anchor[0])
        dofs = slice(mj.jnt_dofadr[joints[0]], mj.jnt_dofadr[joints[0]] + 3)
        if mj.jnt_stiffness[joints[0]] or np.any(mj.dof_damping[dofs]):
            out.skipped.append(f"ball joint {names.of('joint', joints[0])!r}: its stiffness and "
                               "damping are not mapped")
    elif sorted(kinds) == [SLIDE, HINGE] and abs(abs(axis[0] @ axis[1]) - 1) < 1e-9:
        h = kinds.index(HINGE)
        b.add_cylindrical(name, parent, child, anchor[h], axis=axis[h])
        out.joint[joints[h]] = (name, "angle", parent, child)
        out.joint[joints[1 - h]] = (name, "slide", parent, child)
    elif kinds == [HINGE, HINGE] and same_point and abs(axis[0] @ axis[1]) < 1e-9:
        b.add_universal(name, parent, child, anchor[0], axes=(axis[0], axis[1]))
    elif kinds == [HINGE] * 3 and same_point and abs(np.linalg.det(np.array(axis))) > 1e-6:
        b.add_spherical(name, parent, child, anchor[0])
    else:
        raise ValueError(
            f"{where}: its joints {[names.of('joint', j) for j in joints]} (types "
            f"{[('free', 'ball', 'slide', 'hinge')[k] for k in kinds]}) are no joint jmbs has "
            "(revolute, prismatic, spherical, cylindrical, universal); put the joints on separate "
            "bodies with mass, or use one of these combinations")
    if len(joints) > 1 and kinds[0] != FREE:
        combined = [names.of("joint", j) for j in joints]
        if name != combined[0]:
            out.renamed.append(f"joints {combined} of body {child!r} are one jmbs joint {name!r}")


def _equalities(mujoco, mj, data, names, out: _Mapping, label) -> None:
    b = out.b
    for e in range(mj.neq):
        kind, ename = int(mj.eq_type[e]), names.of("equality", e)
        if out.urdf is not None and kind == EQ_JOINT and ename == f"equality{e}":  # a URDF mimic
            ename = f"{names.of('joint', int(mj.eq_obj1id[e]))}_mimic"
        if not mj.eq_active0[e]:
            out.skipped.append(f"equality {ename!r} is inactive at the start: left out")
            continue
        if kind in (EQ_CONNECT, EQ_WELD):
            (b1, p1), (b2, p2) = (_anchor(mj, data, e, k) for k in (1, 2))
            bi, bj = out.body.get(b1, GROUND), out.body.get(b2, GROUND)
            if bi == bj:
                out.skipped.append(f"equality {ename!r} joins a body with itself (or the ground "
                                   "with the ground): left out")
                continue
            name = out.name(ename, "equality")
            if kind == EQ_CONNECT:
                if np.linalg.norm(p1 - p2) > 1e-9 * (1 + np.linalg.norm(p1)):
                    out.skipped.append(f"connect {ename!r}: its anchors are {np.linalg.norm(p1 - p2):.3g} m "
                                       "apart in the pose; jmbs joins them at body1's anchor")
                b.add_spherical(name, bi, bj, p1)
            else:
                b.add_weld(name, bi, bj, point=p2)
                if not _default_relpose(mj, data, e):
                    out.skipped.append(f"weld {ename!r}: its relpose differs from the pose; jmbs "
                                       "holds the bodies' relative pose of the pose")
        elif kind == EQ_JOINT:
            _coupling(mj, data, names, out, e, ename, label)
        else:
            out.skipped.append(f"equality {ename!r} ({mujoco.mjtEq(kind).name}) is not mapped")


def _anchor(mj, data, e: int, k: int) -> tuple[int, np.ndarray]:
    """MuJoCo body and global anchor point of side `k` (1, 2) of a connect or weld."""
    obj = int(mj.eq_obj1id[e] if k == 1 else mj.eq_obj2id[e])
    if mj.eq_objtype[e] == OBJ_SITE:
        return int(mj.site_bodyid[obj]), np.array(data.site_xpos[obj])
    if mj.eq_type[e] == EQ_CONNECT:  # one anchor per side, in that body's frame
        at, local = obj, mj.eq_data[e, 0:3] if k == 1 else mj.eq_data[e, 3:6]
    else:  # a weld's anchor is one point, given in body2's frame
        at, local = int(mj.eq_obj2id[e]), mj.eq_data[e, 0:3]
    return obj, np.array(data.xpos[at]) + np.array(data.xmat[at]).reshape(3, 3) @ local


def _default_relpose(mj, data, e: int) -> bool:
    """Whether a weld's `relpose` (the anchor's position and body2's rotation in body1's
    frame) is the pose's own, which is what jmbs holds."""
    if mj.eq_objtype[e] == OBJ_SITE:
        return True
    b1 = int(mj.eq_obj1id[e])
    R1 = np.array(data.xmat[b1]).reshape(3, 3)
    R2 = np.array(data.xmat[int(mj.eq_obj2id[e])]).reshape(3, 3)
    Rrel = np.asarray(quat_to_rot(jnp.asarray(mj.eq_data[e, 6:10] / np.linalg.norm(mj.eq_data[e, 6:10]))))
    anchor = _anchor(mj, data, e, 2)[1]
    offset = R1.T @ (anchor - np.array(data.xpos[b1]))
    return bool(np.allclose(R1 @ Rrel, R2, atol=1e-8)
                and np.allclose(offset, mj.eq_data[e, 3:6], atol=1e-8 * (1 + np.linalg.norm(offset))))


# ----- joint couplings -----


def _coupling(mj, data, names, out: _Mapping, e: int, ename: str, label) -> None:
    """`joint` equality: `y - y0 = a0 + a1 (x - x0) + ... + a4 (x - x0)^4`, y joint1, x joint2,
    y0, x0 their `qpos0`; without joint2, `y - y0 = a0` (a driver holding joint1)."""
    j1, j2 = int(mj.eq_obj1id[e]), int(mj.eq_obj2id[e])
    a = np.array(mj.eq_data[e, :5], dtype=float)
    for j in (j1, j2):
        if j >= 0 and j not in out.joint:
            out.skipped.append(f"joint equality {ename!r}: joint {names.of('joint', j)!r} is not a "
                               "hinge or slide jmbs measures: left out")
            return
    qref = np.array(data.qpos)
    off1 = float(qref[mj.jnt_qposadr[j1]] - mj.qpos0[mj.jnt_qposadr[j1]])
    name = out.name(ename, "equality")
    if j2 < 0:
        element, coordinate = out.joint[j1][:2]
        out.b.add_driver(name, element, repr(float(a[0] - off1)), coordinate=coordinate)
        return
    off2 = float(qref[mj.jnt_qposadr[j2]] - mj.qpos0[mj.jnt_qposadr[j2]])
    m1, m2 = (_measure(data, out, j) for j in (j1, j2))
    bodies = sorted(set(m1.bodies) | set(m2.bodies), key=lambda s: (s == GROUND, s))
    n1, n2 = (tuple(bodies.index(s) for s in m.bodies) for m in (m1, m2))

    def phi(qs, t):
        y = m1(*(qs[k] for k in n1)) + off1
        x = m2(*(qs[k] for k in n2)) + off2
        return jnp.stack([y - sum(a[k] * x ** k for k in range(5))])

    out.b.add_constraint(name, bodies, holonomic=phi, components=("M" if m1.angle else "F",))


@dataclass(frozen=True)
class _Measure:
    """A hinge's angle or a slide's displacement between two bodies from their coordinates
    `(r, p)`, measured from the reference configuration."""

    bodies: tuple[str, str]
    angle: bool
    axis: np.ndarray  # in body i's frame
    point_i: np.ndarray  # anchor, local to body i
    point_j: np.ndarray  # anchor, local to body j
    p_rel0: np.ndarray  # the reference relative rotation conj(p_i0) p_j0

    def __call__(self, qi, qj):
        pi, pj = qi[3:7], qj[3:7]
        if self.angle:
            d = quat_multiply(quat_multiply(_conj(pi), pj), _conj(jnp.asarray(self.p_rel0)))
            return 2 * jnp.arctan2(d[1:] @ self.axis, d[0])
        return rotate(qi, self.axis) @ (point(qj, self.point_j) - point(qi, self.point_i))


def _measure(data, out: _Mapping, j: int) -> _Measure:
    _, coordinate, bi, bj = out.joint[j]
    (ri, Ri), (rj, Rj) = ((np.zeros(3), np.eye(3)) if b == GROUND else out.pose[b] for b in (bi, bj))
    x = np.array(data.xanchor[j])
    return _Measure((bi, bj), coordinate == "angle", Ri.T @ np.array(data.xaxis[j]), Ri.T @ (x - ri),
                    Rj.T @ (x - rj), np.asarray(rot_to_quat(jnp.asarray(Ri.T @ Rj))))


def _conj(p):
    return p * jnp.array([1.0, -1.0, -1.0, -1.0])


# ----- force elements -----


def _joint_forces(mj, data, names, out: _Mapping) -> None:
    """Joint stiffness (towards `qpos_spring`) and damping, on hinges and slides."""
    for j, (element, coordinate, _, _) in out.joint.items():
        k, c = float(mj.jnt_stiffness[j]), float(mj.dof_damping[mj.jnt_dofadr[j]])
        if k == 0 and c == 0:
            continue
        adr = mj.jnt_qposadr[j]
        rest = float(mj.qpos_spring[adr] - data.qpos[adr]) if k else 0.0
        _spring(out, f"{names.of('joint', j)}_{'spring' if k else 'damper'}", element, coordinate, k, c,
                rest)


def _spring(out: _Mapping, name: str, element: str, coordinate: str, k: float, c: float,
            rest: float) -> None:
    name = out.name(name, "spring")
    if coordinate == "angle":
        out.b.add_rotational_spring_damper(name, element, k, c, rest_angle=rest)
    else:
        out.b.add_slide_spring_damper(name, element, k, c, rest_slide=rest)


def _actuators(mujoco, mj, data, names, out: _Mapping, ctrl: list, servos: str, label) -> None:
    """Actuators on hinges and slides with affine gain and bias (motor, position, velocity,
    general affine): `gear (gain ctrl + b0 + b1 gear q + b2 gear q')`."""
    for a in range(mj.nu):
        aname = names.of("actuator", a)
        j = int(mj.actuator_trnid[a, 0])
        if mj.actuator_trntype[a] != int(mujoco.mjtTrn.mjTRN_JOINT) or j not in out.joint:
            out.skipped.append(f"actuator {aname!r}: its transmission is not a hinge or slide joint "
                               "jmbs measures: left out")
            continue
        if mj.actuator_gaintype[a] != int(mujoco.mjtGain.mjGAIN_FIXED) or mj.actuator_biastype[a] not in (
                int(mujoco.mjtBias.mjBIAS_NONE), int(mujoco.mjtBias.mjBIAS_AFFINE)):
            out.skipped.append(f"actuator {aname!r}: only fixed gains and affine biases are mapped: "
                               "left out")
            continue
        if mj.actuator_dyntype[a] != int(mujoco.mjtDyn.mjDYN_NONE):
            out.skipped.append(f"actuator {aname!r}: its activation dynamics are ignored (the "
                               "force follows the control at once)")
        if mj.actuator_forcelimited[a]:
            out.skipped.append(f"actuator {aname!r}: its force range is not enforced")
        element, coordinate = out.joint[j][:2]
        gear, gain = float(mj.actuator_gear[a, 0]), float(mj.actuator_gainprm[a, 0])
        b0, b1, b2 = (float(x) for x in mj.actuator_biasprm[a, :3]) if mj.actuator_biastype[a] else (0, 0, 0)
        adr = mj.jnt_qposadr[j]
        qref = float(data.qpos[adr])
        u = ctrl[a]
        stiffness, damping = -gear * gear * b1, -gear * gear * b2
        if stiffness < 0 or damping < 0:
            out.skipped.append(f"actuator {aname!r}: a negative stiffness or damping (bias "
                               f"{[b0, b1, b2]}) is not mapped: left out")
            continue
        if servos == "driver" and stiffness > 0 and b0 == 0:
            _servo_driver(out, aname, element, coordinate, u, -gain / (b1 * gear), qref, label)
            continue
        if isinstance(u, str):
            raise ValueError(f"{label}: actuator {aname!r}: a text control (an expression of t) "
                             "needs servos='driver' for a position servo; give a number")
        if mj.actuator_ctrllimited[a]:
            u = float(np.clip(u, *mj.actuator_ctrlrange[a]))
        constant = gear * (gain * u + b0 + b1 * gear * qref)
        if stiffness > 0 or damping > 0:
            rest = constant / stiffness if stiffness > 0 else 0.0
            _spring(out, aname, element, coordinate, stiffness, damping, rest)
            if stiffness == 0 and constant != 0:
                out.b.add_actuator(out.name(f"{aname}_force", "actuator"), element, constant,
                                   coordinate=coordinate)
        else:
            out.b.add_actuator(out.name(aname, "actuator"), element, constant, coordinate=coordinate)


def _servo_driver(out: _Mapping, aname, element, coordinate, u, scale: float, qref: float,
                  label) -> None:
    """A position servo as a driver: the joint is held where the servo's force vanishes,
    `scale ctrl` (`ctrl / gear` for MuJoCo's position actuator), from the reference."""
    motion = f"({u}) * {scale!r} - {qref!r}"
    start = float(Expression(motion, ())(0.0))
    if abs(start) > 1e-9:
        raise ValueError(
            f"{label}: actuator {aname!r}: as a driver, its target at t = 0 ({start + qref:.6g}) must "
            f"be the joint's position in the pose ({qref:.6g}); set its control, or the pose "
            "(a keyframe), or use servos='force'")
    out.b.add_driver(out.name(aname, "driver"), element, motion, coordinate=coordinate)


def _not_mapped(mujoco, mj, names, out: _Mapping) -> None:
    contact = not mj.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    colliding = [g for g in range(mj.ngeom) if mj.geom_contype[g] or mj.geom_conaffinity[g]]
    if contact and colliding:
        out.skipped.append(f"contacts: {len(colliding)} <collision> geometries; jmbs has no contact"
                           if out.urdf is not None else
                           f"contacts: {len(colliding)} geoms can collide; jmbs has no contact "
                           "(set contype=\"0\" conaffinity=\"0\" to silence this)")
    if mj.ntendon:
        out.skipped.append(f"tendons: {[names.of('tendon', t) for t in range(mj.ntendon)]}")
    for j in range(mj.njnt):
        jn = names.of("joint", j)
        if mj.jnt_limited[j]:
            lo, hi = (float(x) for x in mj.jnt_range[j])
            unit = "m" if mj.jnt_type[j] == SLIDE else "rad"
            what = "<limit>" if out.urdf is not None else "range"
            out.skipped.append(f"joint {jn!r}: its {what} [{lo:.6g}, {hi:.6g}] {unit} is not enforced")
        dof = slice(mj.jnt_dofadr[j], mj.jnt_dofadr[j] + (6 if mj.jnt_type[j] == FREE else
                                                              3 if mj.jnt_type[j] == BALL else 1))
        if np.any(mj.dof_armature[dof]):
            out.skipped.append(f"joint {jn!r}: armature (rotor inertia) is not mapped")
        if np.any(mj.dof_frictionloss[dof]):
            what = "<dynamics friction>" if out.urdf is not None else "frictionloss"
            out.skipped.append(f"joint {jn!r}: {what} is not mapped (jmbs' joint friction "
                               "is Coulomb friction on the reaction)")
    if mj.nsensor:
        out.skipped.append(f"sensors: {mj.nsensor} (jmbs computes its own outputs)")
    if getattr(mj, "nflex", 0):
        out.skipped.append(f"flexes: {mj.nflex}")
    if out.urdf is not None:  # MuJoCo fuses a link on a fixed joint into its parent
        for link, joint, carrier in out.urdf.fused():
            into = "the ground" if carrier == out.urdf.roots[0] else f"body {carrier!r}"
            out.renamed.append(f"link {link!r} (fixed joint {joint!r}) is part of {into}")
