"""Wojtyra & Frączek's mobile robot with a trolley: planar, redundant nonholonomic constraints.

Seven bodies (n = 21): platform 1, steered wheels 2 (front, knife edge W1) and
3 (back, W2), steering links 4 and 5, slider 6 driven in the translational
joint H, trolley 7 hitched by the revolute A. Knife edges W3 and W4 sit on one
axle of the platform, W5 on the trolley. The paper's appendix with the
dimensions is missing; the linkage below is our design with the paper's
structure (joints A-G revolute, H translational, one driver on H):

- B (1-2) at `(+L, 0)` and C (1-3) at `(-L, 0)` on the platform's centre line;
  the W3/W4 axle is the platform's y axis. W1 and W2 touch the ground at B and
  C, so their lateral forces pass through the pivots and never load the
  links: only B, C and W1-W4 share the redundancy, as in the paper.
- Slider 6 is a crossbar that moves along the platform's y axis (H). Link 4
  joins an arm on wheel 2 (D) to the crossbar at E, straight above B; link 5
  (F on the crossbar, G on wheel 3) is its mirror image about the axle. Each
  side is a centred slider-crank, so a slide `d` steers wheel 2 by `delta(d)`
  and wheel 3 by `-delta(d)` over the open range `|delta| < pi/2` (the paper's
  +-90 degrees), with the dead centres exactly at the ends.

Because the front and back wheels are steered mirror-symmetrically about the
axle, the normals of W1, W2 and the axle always meet at one point (the
instantaneous centre), the second dependency besides the coaxial W3, W4:
`rank(Phi_q) = 17`, `rank(Psi) = 4`, `r = 20`, `p = 2`, and one degree of
freedom, the rolling.
"""

import math
from collections.abc import Callable

import jax.numpy as jnp
import numpy as np

from .._builder.builder import ModelBuilder
from .._model import Model

# Default geometry (m): half wheelbase, track of W3/W4, steering arm, link,
# hitch behind the platform centre, drawbar (hitch to the trolley's wheel).
GEOMETRY = {"half_wheelbase": 0.4, "track": 0.6, "arm": 0.12, "link": 0.2, "hitch_offset": 0.6,
            "drawbar": 0.6}


def _crank_height(arm: float, link: float) -> float:
    """Height of the crossbar joint E above B when the wheels point straight ahead."""
    if link <= arm:
        raise ValueError(f"the link ({link}) must be longer than the steering arm ({arm})")
    return math.sqrt(link**2 - arm**2)


def steering_angle(d, arm: float = GEOMETRY["arm"], link: float = GEOMETRY["link"]):
    """Steering angle `delta` of the front wheel 2 at slider displacement `d`
    (from the straight-ahead position); wheel 3 is at `-delta`. Positive `d`
    steers to the right (`delta < 0`). Traceable."""
    h = _crank_height(arm, link)
    # Closed form of |E - D| = link with E = B + (0, h + d), D = B - arm (cos delta, sin delta).
    return jnp.arcsin(-d * (2 * h + d) / (2 * arm * (h + d)))


def slider_displacement(delta, arm: float = GEOMETRY["arm"], link: float = GEOMETRY["link"]):
    """Inverse of `steering_angle`: the slide that steers wheel 2 to `delta`. Traceable."""
    h = _crank_height(arm, link)
    return jnp.sqrt(link**2 - (arm * jnp.cos(delta)) ** 2) - arm * jnp.sin(delta) - h


def steering_range(arm: float = GEOMETRY["arm"], link: float = GEOMETRY["link"]) -> tuple[float, float]:
    """Open interval of slider displacements between the dead centres `delta = +-pi/2`."""
    h = _crank_height(arm, link)
    return link - arm - h, link + arm - h


def steering_manoeuvre(t, amplitude: float = 0.35):
    """Change of the steering angle in the paper's manoeuvre (its Fig. 2): turn right
    (t = 1..5 s), go straight, turn left (t = 6..10 s), straight again.

    Quintic smooth steps (continuous acceleration), zero with zero slope at t = 0,
    so it starts from any reference configuration with the linkage at rest.
    """
    def step(t0):
        x = jnp.clip(t - t0, 0.0, 1.0)
        return x**3 * (10 - 15 * x + 6 * x**2)

    return amplitude * (-(step(1.0) - step(4.0)) + (step(6.0) - step(9.0)))


# The default driver motion as text (a model file holds it): the slide that adds
# `steering_manoeuvre(t)` to the steering angle `delta0` of the reference configuration,
# i.e. `slider_displacement(delta0 + steering_manoeuvre(t)) - slider_displacement(delta0)`
# (relative to the same expression at delta0, so it is exactly 0 at t = 0).
MANOEUVRE = """\
steer = amplitude * (smoothstep(t - 6) - smoothstep(t - 9) - smoothstep(t - 1) + smoothstep(t - 4))
slide = sqrt(link**2 - (arm * cos(delta0 + steer))**2) - arm * sin(delta0 + steer)
slide - (sqrt(link**2 - (arm * cos(delta0))**2) - arm * sin(delta0))"""


def _layout(d, hitch, geometry: dict) -> dict:
    """Steering angle `delta` and the joint and contact points at slide `d` (platform at
    the origin along x, trolley turned by `hitch` relative to the platform). `d` and `hitch`
    are scalars or arrays of one shape `S`: angles have shape `S`, points `S + (2,)`."""
    L, a, link = geometry["half_wheelbase"], geometry["arm"], geometry["link"]
    h = _crank_height(a, link)
    lo, hi = steering_range(a, link)
    d, hitch = np.broadcast_arrays(np.asarray(d, dtype=float), np.asarray(hitch, dtype=float))
    outside = ~((lo < d) & (d < hi))
    if outside.any():
        raise ValueError(f"slider displacement d = {d[outside].flat[0]} is outside the steering "
                         f"range ({lo:.4g}, {hi:.4g}) between the dead centres")
    delta = np.asarray(steering_angle(d, a, link), dtype=float)
    c, s, zero = np.cos(delta), np.sin(delta), np.zeros_like(d)

    def point(x, y):
        return np.stack(np.broadcast_arrays(x, y), axis=-1)

    A = point(-geometry["hitch_offset"], zero)
    return {
        "delta": delta,
        "B": point(L, zero), "C": point(-L, zero),
        "D": point(L - a * c, -a * s), "G": point(-L + a * c, -a * s),
        "E": point(L, h + d), "F": point(-L, h + d),
        "A": A, "W5": A - geometry["drawbar"] * point(np.cos(hitch), np.sin(hitch)),
    }


def _poses(P: dict, hitch) -> list[tuple[np.ndarray, np.ndarray]]:
    """Centre of mass and angle of bodies 1-7 for the joint points `P` of `_layout`
    (links at mid-length)."""
    delta = P["delta"]
    zero = np.zeros_like(delta)

    def mid(p, q):
        return (p + q) / 2, np.arctan2(q[..., 1] - p[..., 1], q[..., 0] - p[..., 0])

    return [(np.zeros_like(P["B"]), zero), (P["B"], delta), (P["C"], -delta), mid(P["D"], P["E"]),
            mid(P["F"], P["G"]), ((P["E"] + P["F"]) / 2, zero), (P["W5"], hitch + zero)]


def _geometry(overrides: dict) -> dict:
    unknown = set(overrides) - set(GEOMETRY)
    if unknown:
        raise ValueError(f"unknown geometry parameters {sorted(unknown)}; known: {sorted(GEOMETRY)}")
    return {**GEOMETRY, **overrides}


def mobile_robot_configuration(d: float, hitch: float = 0.0, **geometry) -> np.ndarray:
    """Coordinates `q (21,)` of `mobile_robot` at slide `d` from the straight-ahead position,
    with the platform at the origin along x and the trolley turned by `hitch`."""
    return mobile_robot_configurations(float(d), float(hitch), **geometry)


def mobile_robot_configurations(ds, hitch=0.0, **geometry) -> np.ndarray:
    """`mobile_robot_configuration` for each slide in `ds` (and hitch angle in `hitch`, a
    scalar or one per slide), stacked `(len(ds), 21)`, computed as arrays (a million in
    about a second); e.g. `ds = np.linspace(*steering_range(), 9)[1:-1]` sweeps the
    steering range."""
    geo = _geometry(geometry)
    hitch = np.asarray(hitch, dtype=float)
    P = _layout(ds, hitch, geo)
    return np.concatenate([np.concatenate([r, phi[..., None]], axis=-1)
                           for r, phi in _poses(P, hitch)], axis=-1)


def mobile_robot(d: float = 0.0, hitch: float = 0.0, speed: float = 1.0,
                 motion: Callable | None = None, **geometry) -> Model:
    """The mobile robot with trolley, built at slide `d` of the steering slider.

    **Arguments:**
    - `d`: displacement of slider 6 relative to the platform, measured from the
      straight-ahead position (`steering_range()` gives the admissible interval).
    - `hitch`: angle of the trolley relative to the platform.
    - `speed`: initial forward speed of the platform centre (the W3/W4 axle
      midpoint); every body gets the consistent rolling velocity, with the
      steering linkage at rest relative to the platform.
    - `motion`: driver of H, the slide `f(t)` measured from this configuration
      (`f(0) = 0`, and `f'(0) = 0` for the initial velocities to be consistent).
      Default: `steering_manoeuvre` added to the present steering angle.
    - `geometry`: overrides of `GEOMETRY` (`half_wheelbase`, `track`, `arm`,
      `link`, `hitch_offset`, `drawbar`).

    Elements in the paper's order A, B, ..., G, H, `drive`, W1, ..., W5, so rows
    0-based 5 (C_y), 17 (W1), 18 (W2), 20 (W4) are the paper's constraints 6,
    18, 19 and 21.
    """
    geo = _geometry(geometry)
    a, link = geo["arm"], geo["link"]
    P = _layout(d, hitch, geo)
    delta = float(P["delta"])
    motion_params = None
    if motion is None:
        motion = MANOEUVRE
        motion_params = {"delta0": delta, "arm": a, "link": link, "amplitude": 0.35}

    # Rolling about the instantaneous centre on the axle line: the W1 contact point
    # at B moves along the wheel, which fixes the platform's rate of turn.
    omega = speed * math.tan(delta) / geo["half_wheelbase"]

    def platform_velocity(p):
        return np.array([speed - omega * p[1], omega * p[0]])

    # The trolley's own rate of turn keeps its wheel W5 from slipping sideways.
    heading7 = np.array([math.cos(hitch), math.sin(hitch)])
    normal7 = np.array([-heading7[1], heading7[0]])
    omega7 = normal7 @ platform_velocity(P["A"]) / geo["drawbar"]
    v7 = platform_velocity(P["A"]) - omega7 * geo["drawbar"] * normal7

    # The plane of the model is the ground: gravity acts normal to it and does no work.
    b = ModelBuilder(dim=2)
    half_length, half_width = geo["half_wheelbase"] + 0.1, geo["track"] / 2
    rod = 0.2 * link**2 / 12  # slender links of 0.2 kg
    inertias = {"platform": (20.0, 20.0 * (half_length**2 + half_width**2) / 3),
                "wheel_front": (1.0, 0.01), "wheel_back": (1.0, 0.01), "link4": (0.2, rod),
                "link5": (0.2, rod), "slider": (0.5, 0.5 * (2 * geo["half_wheelbase"]) ** 2 / 12)}
    # Bodies 1-6 start rigidly with the platform (the linkage at rest relative to it).
    platform, wheel2, wheel3, link4, link5, slider = (
        b.add_body(name, mass=m, inertia=J, position=r, angle=phi, velocity=platform_velocity(r),
                   angular_velocity=omega)
        for (name, (m, J)), (r, phi) in zip(inertias.items(), _poses(P, hitch)))
    trolley = b.add_body("trolley", mass=5.0, inertia=0.5, position=P["W5"], angle=hitch,
                         velocity=v7, angular_velocity=omega7)

    b.add_revolute("A", platform, trolley, point=P["A"])
    b.add_revolute("B", platform, wheel2, point=P["B"])
    b.add_revolute("C", platform, wheel3, point=P["C"])
    b.add_revolute("D", wheel2, link4, point=P["D"])
    b.add_revolute("E", link4, slider, point=P["E"])
    b.add_revolute("F", slider, link5, point=P["F"])
    b.add_revolute("G", link5, wheel3, point=P["G"])
    b.add_prismatic("H", platform, slider, point=P["E"], axis=(0.0, 1.0))
    b.add_driver("drive", joint="H", motion=motion, params=motion_params)
    b.add_knife_edge("W1", wheel2, point=P["B"], direction=(math.cos(delta), math.sin(delta)))
    b.add_knife_edge("W2", wheel3, point=P["C"], direction=(math.cos(delta), -math.sin(delta)))
    b.add_knife_edge("W3", platform, point=(0.0, half_width), direction=(1.0, 0.0))
    b.add_knife_edge("W4", platform, point=(0.0, -half_width), direction=(1.0, 0.0))
    b.add_knife_edge("W5", trolley, point=P["W5"], direction=heading7)
    return b.build()
