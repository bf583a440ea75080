"""Pękal & Frączek's planar gripper: a redundant triangle of translational joints.

Ground and four bodies, six joints: translational Bt (ground-1), Ct (ground-2)
and Dt (1-2), revolute Br (1-3), Cr (2-4) and Er (3-4). The paper gives only
the structure and `phi4 = -pi/6`; the dimensions below are ours:

- slider 1 runs along the ground's x axis through B (Bt's reaction along y),
  slider 2 along the y axis through C (Ct's reaction along x);
- Dt lets slider 2 move relative to slider 1 along `(1, -1)/sqrt(2)` (its
  reaction along `(1, 1)/sqrt(2)`), so both sliders advance together by the
  same `s`: one degree of freedom;
- the jaws 3 (B-E) and 4 (C-E) close the loop at E; `phi4` is the angle of jaw 4.

Planar translational joints also lock the relative rotation (row `M`): the
three moments of Bt, Ct and Dt are one redundant loop (`p = 1`), which is why
the paper finds Bt, Ct, Dt non-unique and Br, Cr, Er unique.
"""

import math
from collections.abc import Callable

import jax.numpy as jnp
import numpy as np

from .._builder.builder import ModelBuilder
from .._model import Model

G = 9.81

ACTUATIONS = ("none", "torque", "overactuated")


def _jaw_point(C, jaw4: float, phi4):
    return C + jaw4 * jnp.array([jnp.cos(phi4), jnp.sin(phi4)])


def gripper_slide(phi4, b: float = 0.7, c: float = 0.5, jaw4: float = 0.4,
                  phi4_ref: float = -math.pi / 6):
    """Common slide `s` of both sliders, from the reference configuration at `phi4_ref`,
    at jaw angle `phi4`, on the reference's assembly branch. Traceable in `phi4`."""
    # |E - B| = jaw3 with B = (b + s, 0), E = (0, c + s) + jaw4 (cos phi4, sin phi4):
    # (u - s)^2 + (w + s)^2 = jaw3^2, a quadratic in s whose roots at the reference are
    # 0 and u - w; keep the root that is 0 there. (The reference values stay host floats:
    # under `jit` every jnp operation is traced, and the branch must be known.)
    u0, w0 = jaw4 * math.cos(phi4_ref) - b, c + jaw4 * math.sin(phi4_ref)
    jaw3_sq = u0**2 + w0**2
    branch = 1.0 if u0 < w0 else -1.0
    u, w = jaw4 * jnp.cos(phi4) - b, c + jaw4 * jnp.sin(phi4)
    return ((u - w) + branch * jnp.sqrt(2 * jaw3_sq - (u + w) ** 2)) / 2


def gripper(actuation: str = "none", phi4: float = -math.pi / 6, b: float = 0.7, c: float = 0.5,
            jaw4: float = 0.4, motion: Callable | None = None) -> Model:
    """The planar gripper of Pękal & Frączek (ground + 4 bodies), jaw 4 at angle `phi4`.

    **Arguments:**
    - `actuation`: `"none"` (the paper's §4.1); `"torque"`: a driver `drive_Cr`
      on the revolute Cr (§4.2); `"overactuated"`: also a driver `drive_Bt` on the
      translational joint Bt (§4.3), whose slide follows `gripper_slide` so the
      two drives agree.
    - `phi4`: angle of jaw 4 (the paper: `-pi/6`).
    - `b`, `c`: slider 1 at `B = (b, 0)`, slider 2 at `C = (0, c)`; `jaw4`:
      length of jaw 4 (C-E); jaw 3 (B-E) closes the loop.
    - `motion`: the Cr angle `f(t)` from this configuration (`f(0) = 0`);
      default: hold still, as in the paper's kinetostatic analysis.

    A driver's multiplier is the actuator's torque or force, so the drives are
    the paper's driving forces.
    """
    if actuation not in ACTUATIONS:
        raise ValueError(f"actuation must be one of {ACTUATIONS}, got {actuation!r}")
    B, C = np.array([b, 0.0]), np.array([0.0, c])
    E = np.asarray(_jaw_point(C, jaw4, phi4))
    D = (B + C) / 2  # where the sliders meet; any point works for a translational joint

    bld = ModelBuilder(dim=2, gravity=(0.0, -G))
    slider1 = bld.add_body("slider1", mass=0.5, inertia=0.005, position=B)
    slider2 = bld.add_body("slider2", mass=0.5, inertia=0.005, position=C)
    jaws = []
    for name, p in (("jaw3", B), ("jaw4", C)):
        L = float(np.linalg.norm(E - p))
        jaws.append(bld.add_body(name, mass=0.2, inertia=0.2 * L**2 / 12, position=(p + E) / 2,
                                 angle=math.atan2(E[1] - p[1], E[0] - p[0])))
    bld.add_prismatic("Bt", bld.ground, slider1, point=B, axis=(1.0, 0.0))
    bld.add_prismatic("Ct", bld.ground, slider2, point=C, axis=(0.0, 1.0))
    bld.add_prismatic("Dt", slider1, slider2, point=D, axis=(1.0, -1.0))
    bld.add_revolute("Br", slider1, jaws[0], point=B)
    bld.add_revolute("Cr", slider2, jaws[1], point=C)
    bld.add_revolute("Er", jaws[0], jaws[1], point=E)
    if actuation != "none":
        bld.add_driver("drive_Cr", joint="Cr", motion="0" if motion is None else motion)
        if actuation == "overactuated" and motion is None:
            bld.add_driver("drive_Bt", joint="Bt", motion="0")
        elif actuation == "overactuated":
            s0 = gripper_slide(phi4, b, c, jaw4, phi4)

            def slide(t):
                return gripper_slide(phi4 + motion(t), b, c, jaw4, phi4) - s0

            bld.add_driver("drive_Bt", joint="Bt", motion=slide)
    return bld.build()
