"""Every joint kind's `Phi` and `C` against textbook formulas written here in NumPy.

`tests/test_elements.py` checks `C = Phi_q N` with `jax.jacfwd` of jmbs's own `Phi`,
so a wrong `Phi` would pass there. Here `Phi` is written independently of the element
classes, from the builder's global geometry (joint point `P`, axis `a`, body poses)
with the textbook constraints (Nikravesh, Haug: spherical, dot-1 and dot-2
constraints; planar pins, sliders and welds; rods; drivers), and compared with
`jmbs.phi` at random configurations off the constraints. `C` is compared with
central differences of the hand-written `Phi` along each velocity coordinate's own
motion (a translation; a rotation about a body axis, `p ⊗ (cos h/2, sin h/2 e_k)`,
since `omega'` is the body-frame angular velocity, docs/conventions.md), and `b`
with the time derivative of the drivers' motion. No quaternion rate matrix or
jmbs rotation helper is used.

jmbs's documented conventions that fix each row's basis and sign: position rows
are the components of the joint-point separation `d = r_j + R_j s_j - r_i - R_i s_i`
in the joint frame of body i (`z` along the axis: the shortest-arc rotation of the
global `z` onto it; global axes for spherical and weld joints; `(a1, a2 orthogonal,
a1 x a2)` for the universal joint); orientation rows are the dot-1 constraints
`(-z_j.y_i, z_j.x_i, x_j.y_i)`; the universal joint's is `-x_i.y_j`; a planar
slider's rows are `n.d` (`n` the axis turned by +90 degrees) and the relative angle;
a rod's row is `(|d|^2 - L^2) / (2 L)`; drivers subtract the motion from the
coordinate measured from the reference configuration (angles wrapped in 3-D).
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import GENERAL_COMPONENTS

import jmbs

MOTION_AMPLITUDE, MOTION_RATE = 0.3, 2.0
P2, AXIS2 = np.array([0.6, 0.3]), np.array([1.0, 0.5])
P3, AXIS3 = np.array([0.6, 0.3, 0.05]), np.array([0.2, 1.0, 0.4])
AXIS3_B = np.cross(AXIS3, (1.0, 0.0, 0.0))  # the universal joint's second axis
POSE2 = {"b1": (np.array([0.1, 0.2]), 0.3), "b2": (np.array([1.1, 0.4]), -0.4)}
POSE3 = {"b1": (np.array([0.1, 0.2, 0.3]), np.array([0.8, 0.2, -0.1, 0.3]) / math.sqrt(0.78)),
         "b2": (np.array([1.1, 0.4, -0.2]), np.array([0.9, 0.1, -0.3, 0.2]) / math.sqrt(0.95))}


def motion(t):
    return MOTION_AMPLITUDE * math.sin(MOTION_RATE * t)


def motion_rate(t):
    return MOTION_AMPLITUDE * MOTION_RATE * math.cos(MOTION_RATE * t)


# ---------------------------------------------------------------- textbook kinematics

def rot2(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s], [s, c]])


def quat_rot(p):
    """Rotation matrix of the unit quaternion `p = (w, x, y, z)`."""
    w, x, y, z = np.asarray(p) / np.linalg.norm(p)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def quat_mul(a, b):
    aw, av, bw, bv = a[0], np.asarray(a[1:]), b[0], np.asarray(b[1:])
    return np.concatenate([[aw * bw - av @ bv], aw * bv + bw * av + np.cross(av, bv)])


def axis_frame(a):
    """Frame with `z` along `a`: the rotation about `z x a` by the angle between them
    (Rodrigues' formula)."""
    a = np.asarray(a, float) / np.linalg.norm(a)
    k = np.cross([0.0, 0.0, 1.0], a)
    s, c = np.linalg.norm(k), a[2]
    k = k / s
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return c * np.eye(3) + s * K + (1 - c) * np.outer(k, k)


def two_axes_frame(a1, a2):
    x = np.asarray(a1, float) / np.linalg.norm(a1)
    y = a2 - (a2 @ x) * x
    y = y / np.linalg.norm(y)
    return np.stack([x, y, np.cross(x, y)], axis=1)


def wrap(angle):
    return (angle + math.pi) % (2 * math.pi) - math.pi


# ---------------------------------------------------------------- the cases

def build(dim: int, kind: str, ground: bool) -> jmbs.Model:
    """Body b1 (or the ground) and body b2 joined by `J` of `kind` (`"revolute+angle"`: with a
    driver `D` of that coordinate)."""
    b = jmbs.ModelBuilder(dim=dim)
    bodies = []
    for name in ("b1", "b2"):
        if name == "b1" and ground:
            bodies.append(b.ground)
            continue
        r, o = (POSE2 if dim == 2 else POSE3)[name]
        orient = {"angle": o} if dim == 2 else {"quaternion": o}
        inertia = 0.1 if dim == 2 else (0.1, 0.2, 0.3)
        bodies.append(b.add_body(name, mass=1.0, inertia=inertia, position=r, **orient))
    base, _, coordinate = kind.partition("+")
    P, axis = (P2, AXIS2) if dim == 2 else (P3, AXIS3)
    geometry = {"point": P}
    if base in ("revolute", "prismatic", "cylindrical") and not (dim == 2 and base == "revolute"):
        geometry["axis"] = axis
    if base == "universal":
        geometry["axes"] = (AXIS3, AXIS3_B)
    if base == "distance":
        geometry = {"point_i": P, "point_j": P + 0.5}
    if base in ("inline", "parallel_axes") or (dim == 2 and base == "pin_in_slot"):
        geometry["axis"] = axis
    if base in ("inplane", "planar"):
        geometry["normal"] = axis
    if base in ("perpendicular", "general"):
        geometry["axes"] = (AXIS3, AXIS3_B)
    if base == "general":
        geometry["components"] = GENERAL_COMPONENTS
    b.add_joint(base, "J", *bodies, **geometry)
    if coordinate:
        b.add_driver("D", joint="J", motion=lambda t: MOTION_AMPLITUDE * jnp.sin(MOTION_RATE * t),
                     coordinate=coordinate if base == "cylindrical" else None)
    return b.build(check=False)


def poses(dim, q, ground):
    """`[(r, R), (r, R)]` of body i (the ground: identity) and body j from `q`."""
    nqb = 3 if dim == 2 else 7
    qb = np.asarray(q).reshape(-1, nqb)
    out = [] if not ground else [(np.zeros(dim), np.eye(dim))]
    for row in qb:
        out.append((row[:2], rot2(row[2])) if dim == 2 else (row[:3], quat_rot(row[3:])))
    return out


def reference_poses(dim, ground):
    pose = POSE2 if dim == 2 else POSE3
    q = np.concatenate([np.concatenate([r, [o] if dim == 2 else o / np.linalg.norm(o)])
                        for name, (r, o) in pose.items() if not (ground and name == "b1")])
    return poses(dim, q, ground)


def textbook_phi(dim, kind, ground, q, t):
    """`Phi` of the joint (and its driver) between the two bodies at `q`, from the
    global geometry above."""
    base, _, coordinate = kind.partition("+")
    (ri0, Ri0), (rj0, Rj0) = reference_poses(dim, ground)
    (ri, Ri), (rj, Rj) = poses(dim, q, ground)
    Pi, Pj = (P2, P2) if dim == 2 else (P3, P3)
    if base == "distance":
        Pi, Pj = Pi, Pi + 0.5
    si, sj = Ri0.T @ (Pi - ri0), Rj0.T @ (Pj - rj0)   # local joint points
    d = rj + Rj @ sj - ri - Ri @ si
    if base == "distance":
        L = np.linalg.norm(Pj - Pi)
        return np.array([(d @ d - L**2) / (2 * L)])
    if dim == 2:
        return _planar_rows(base, coordinate, d, Ri, Ri0, Rj, Rj0, t)
    return _spatial_rows(base, coordinate, d, Ri, Ri0, Rj, Rj0, t)


def _angle2(R):
    return math.atan2(R[1, 0], R[0, 0])


def _planar_rows(base, coordinate, d, Ri, Ri0, Rj, Rj0, t):
    rel = _angle2(Rj) - _angle2(Ri) - (_angle2(Rj0) - _angle2(Ri0))
    u = Ri @ (Ri0.T @ (AXIS2 / np.linalg.norm(AXIS2)))  # the slider axis, fixed in body i
    if base == "revolute":
        rows = list(d)
    elif base == "pin_in_slot":  # the pin stays on the slot: no motion normal to it
        rows = [np.array([-u[1], u[0]]) @ d]
    elif base == "weld":
        rows = [*d, rel]
    else:  # prismatic: no motion normal to the axis, no relative rotation
        rows = [np.array([-u[1], u[0]]) @ d, rel]
    if coordinate:  # the angle of a pin, the slide of a slider
        rows.append((rel if coordinate == "angle" else u @ d) - motion(t))
    return np.array(rows)


def _spatial_rows(base, coordinate, d, Ri, Ri0, Rj, Rj0, t):
    if base in ("universal", "perpendicular"):
        E = two_axes_frame(AXIS3, AXIS3_B)
        Ei, yj = Ri @ Ri0.T @ E, Rj @ Rj0.T @ E[:, 1]
        square = [-(Ei[:, 0] @ yj)]  # the first axis (on i) perpendicular to the second (on j)
        return np.array(square) if base == "perpendicular" else np.concatenate([Ei.T @ d, square])
    if base in ("inline", "inplane", "orientation", "parallel_axes", "planar"):
        return _primitive_rows(base, d, Ri, Ri0, Rj, Rj0)
    if base == "general":  # the chosen rows of the separation and the lock in (a1, a2, a1 x a2)
        E = two_axes_frame(AXIS3, AXIS3_B)
        Ei, Ej = Ri @ Ri0.T @ E, Rj @ Rj0.T @ E
        (xi, yi, zi), (xj, zj) = Ei.T, (Ej[:, 0], Ej[:, 2])
        every = dict(zip(("Fx", "Fy", "Fz", "Mx", "My", "Mz"),
                         [xi @ d, yi @ d, zi @ d, -(zj @ yi), zj @ xi, xj @ yi]))
        return np.array([every[c] for c in GENERAL_COMPONENTS])
    E = np.eye(3) if base in ("spherical", "weld") else axis_frame(AXIS3)
    Ei, Ej = Ri @ Ri0.T @ E, Rj @ Rj0.T @ E   # the joint frame carried by body i, by body j
    (xi, yi, zi), (xj, zj) = Ei.T, (Ej[:, 0], Ej[:, 2])
    position = {"spherical": 3, "revolute": 3, "weld": 3, "prismatic": 2, "cylindrical": 2}[base]
    lock = {"spherical": [], "revolute": [-(zj @ yi), zj @ xi], "cylindrical": [-(zj @ yi), zj @ xi],
            "prismatic": [-(zj @ yi), zj @ xi, xj @ yi], "weld": [-(zj @ yi), zj @ xi, xj @ yi]}[base]
    rows = [*(Ei.T @ d)[:position], *lock]
    if coordinate == "angle":  # of x_j about z_i, from x_i
        rows.append(wrap(math.atan2(xj @ yi, xj @ xi) - motion(t)))
    elif coordinate == "slide":  # along z_i
        rows.append(zi @ d - motion(t))
    return np.array(rows)


def _primitive_rows(base, d, Ri, Ri0, Rj, Rj0):
    """Adams' joint primitives in the frame of their line (`inline`, `parallel_axes`: z
    along the axis), of their plane (`inplane`, `planar`: z along the normal) or global
    (`orientation`), carried by body i (and by body j for the rotations)."""
    E = np.eye(3) if base == "orientation" else axis_frame(AXIS3)
    Ei, Ej = Ri @ Ri0.T @ E, Rj @ Rj0.T @ E
    (xi, yi, zi), (xj, zj) = Ei.T, (Ej[:, 0], Ej[:, 2])
    parallel = [-(zj @ yi), zj @ xi]  # z of j along z of i
    return np.array({"inline": [xi @ d, yi @ d], "inplane": [zi @ d],
                     "orientation": [*parallel, xj @ yi], "parallel_axes": parallel,
                     "planar": [zi @ d, *parallel]}[base])


def _perturbed(dim, q, k, h):
    """`q` moved by `h` along velocity coordinate `k` (per body: translations, then the
    planar angle or a rotation about body axis `k - 3`)."""
    q = np.asarray(q, float).copy()
    nqb, nvb = (3, 3) if dim == 2 else (7, 6)
    body, j = divmod(k, nvb)
    qb = q[body * nqb:(body + 1) * nqb]
    if dim == 2 or j < 3:
        qb[j] += h
    else:
        e = np.zeros(3)
        e[j - 3] = math.sin(h / 2)
        qb[3:] = quat_mul(qb[3:], np.concatenate([[math.cos(h / 2)], e]))
    return q


PLANAR = ["revolute", "prismatic", "weld", "distance", "pin_in_slot", "revolute+angle",
          "prismatic+slide"]
SPATIAL = ["spherical", "revolute", "prismatic", "cylindrical", "universal", "weld", "distance",
           "inline", "inplane", "orientation", "parallel_axes", "perpendicular", "planar",
           "general", "revolute+angle", "prismatic+slide", "cylindrical+slide", "cylindrical+angle"]
CASES = [(2, k) for k in PLANAR] + [(3, k) for k in SPATIAL]


def _random_q(model, seed):
    rng = np.random.default_rng(seed)
    nqb = 3 if model.dim == 2 else 7
    qb = np.asarray(model.q0).reshape(-1, nqb) + 0.3 * rng.standard_normal((model.nq // nqb, nqb))
    if model.dim == 3:
        qb[:, 3:] /= np.linalg.norm(qb[:, 3:], axis=1, keepdims=True)
    return qb.ravel(), float(rng.uniform(0.0, 2.0))


def test_every_two_body_kind_is_covered():
    """A new joint kind or drivable coordinate needs its textbook rows here."""
    for dim, cases in ((2, PLANAR), (3, SPATIAL)):
        joints = {k for k, t in jmbs.ELEMENT_TYPES.items()
                  if t.family == "joint" and t.bodies == 2 and dim in t.classes}
        assert joints == {c.partition("+")[0] for c in cases}, dim
        drivable = {f"{k}+{c}" for k in joints for c in jmbs.ELEMENT_TYPES[k].drivable.get(dim, ())}
        assert drivable == {c for c in cases if "+" in c}, dim


@pytest.mark.parametrize("ground", [False, True], ids=["two-bodies", "ground"])
@pytest.mark.parametrize("dim,kind", CASES)
def test_phi_C_and_b_match_the_textbook_formulas(dim, kind, ground):
    model = build(dim, kind, ground)
    n_rows = len(textbook_phi(dim, kind, ground, np.asarray(model.q0), 0.0))
    assert model.nc == n_rows
    # The reference configuration satisfies every row at t = 0 (a check of the hand
    # formulas' geometry, not of jmbs).
    np.testing.assert_allclose(textbook_phi(dim, kind, ground, np.asarray(model.q0), 0.0), 0, atol=1e-14)
    terms = jax.jit(lambda q, t: (jmbs.phi(model, q, t), jmbs.constraint_matrix(model, q, t),
                                  jmbs.velocity_rhs(model, q, t)))
    largest = 0.0
    for seed in range(3):
        q, t = _random_q(model, seed)
        phi = textbook_phi(dim, kind, ground, q, t)
        largest = max(largest, np.abs(phi).max())
        got_phi, C, got_b = (np.asarray(x) for x in terms(q, t))
        np.testing.assert_allclose(got_phi, phi, rtol=0, atol=1e-13)
        h = 1e-5
        fd = np.stack([(textbook_phi(dim, kind, ground, _perturbed(dim, q, k, h), t)
                        - textbook_phi(dim, kind, ground, _perturbed(dim, q, k, -h), t)) / (2 * h)
                       for k in range(model.nv)], axis=1)
        np.testing.assert_allclose(C, fd, rtol=0, atol=1e-8 * max(1.0, np.abs(fd).max()))
        b = np.zeros(n_rows)
        if "+" in kind:
            b[-1] = -motion_rate(t)
        np.testing.assert_allclose(got_b, b, rtol=0, atol=1e-13)
    assert largest > 1e-2  # the configurations are off the constraints
