"""A four-wheeled robot in 3-D with rigid axles: wheels rolling without slipping on the
ground (`ModelBuilder.add_wheel`), whose nonholonomic constraints are redundant (the
spatial counterpart of paper 000's mobile robot)."""

import numpy as np

from .._builder.builder import ModelBuilder
from .._model import Model

G = 9.81


def four_wheeled_robot(speed: float = 1.0, radius: float = 0.2, track: float = 0.6,
                       wheelbase: float = 1.0, torque: float = 0.0) -> Model:
    """A chassis (20 kg box) on a front and a rear axle (2 kg each, revolute to the
    chassis about the lateral y axis); on each axle two wheels (1 kg discs of `radius`)
    welded to it (a rigid axle: both wheels turn together), `track` apart; the axles
    `wheelbase` apart. The four wheels roll on the ground plane z = 0; gravity -z;
    moving forward along x at `speed` (wheels rolling), in the reference configuration.
    With `torque`, a motor on each bearing drives its axle (N m, about +y: forward).

    Rows: 2 revolutes (5 each), 4 welds (6), 4 wheels (3: contact, rolling, side):
    46 rows, 42 velocities, rank 41: one degree of freedom (straight rolling) and
    five redundant constraints: one holonomic (four contacts on a rigid frame, a
    four-legged table) and four nonholonomic (each axle's two side rows and two
    rolling rows say the same)."""
    b = ModelBuilder(dim=3, gravity=(0.0, 0.0, -G))
    z = radius
    omega = (0.0, speed / radius, 0.0)  # rolling forward along x about +y
    b.add_body("chassis", mass=20.0, inertia=(20.0 / 12 * (track**2 + 0.2**2),
                                              20.0 / 12 * (wheelbase**2 + 0.2**2),
                                              20.0 / 12 * (wheelbase**2 + track**2)),
               position=(0.0, 0.0, z + 0.1), velocity=(speed, 0.0, 0.0))
    m, r = 1.0, radius
    disc = (m * r**2 / 4, m * r**2 / 2, m * r**2 / 4)  # axle along the body's y
    for axle, x in (("front", wheelbase / 2), ("rear", -wheelbase / 2)):
        b.add_body(f"{axle}_axle", mass=2.0, inertia=(2.0 * track**2 / 12, 0.01, 2.0 * track**2 / 12),
                   position=(x, 0.0, z), velocity=(speed, 0.0, 0.0), angular_velocity=omega)
        b.add_revolute(f"{axle}_bearing", "chassis", f"{axle}_axle", point=(x, 0.0, z),
                       axis=(0.0, 1.0, 0.0))
        if torque:
            b.add_actuator(f"{axle}_motor", f"{axle}_bearing", torque)
        for side, y in (("left", track / 2), ("right", -track / 2)):
            wheel = f"{axle}_{side}"
            b.add_body(wheel, mass=m, inertia=disc, position=(x, y, z), velocity=(speed, 0.0, 0.0),
                       angular_velocity=omega)
            b.add_weld(f"{wheel}_hub", f"{axle}_axle", wheel, point=(x, y, z))
            b.add_wheel(f"{wheel}_contact", wheel, radius=r, axis=(0.0, 1.0, 0.0))
    return b.build()


MASS = 20.0 + 2 * 2.0 + 4 * 1.0  # chassis, axles, wheels


def rolling_inertia(model: Model) -> float:
    """The axles' and wheels' moments of inertia about their axles (kg m^2), summed."""
    names = [n for n in model.body_names if n != "chassis"]
    return float(sum(np.asarray(model.inertia)[model.body_names.index(n)][1, 1] for n in names))


def robot_forward_speed(model: Model, v) -> np.ndarray:
    """The chassis's velocity along x for velocities `v (..., nv)`."""
    k = model.body_names.index("chassis")
    return np.asarray(v)[..., 6 * k]
