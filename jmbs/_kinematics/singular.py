"""Singular configurations: the generic rank at one configuration (from nearby assembled
ones) and the singular points along a motion."""


import jax
import jax.numpy as jnp
import numpy as np

from .._assembly import (
    constraint_matrix,
)
from .._bodies import retract
from .._joints.base import DriverSpec
from .._linalg import (
    GAUSS_NEWTON_RTOL,
    TINY,
)
from .._misc import RunOnce, warn_user
from .._model import Model
from .._rank import constraint_rank
from .assemble import assemble_jit, velocity_units_jit

# ----- Singular configurations -----
# The papers' verdicts hold "in every nonsingular configuration". At a singular one (a
# slider-crank at dead centre driven at the slider, a parallelogram with its links
# collinear) the rank of C drops below the rank it has at almost every nearby
# configuration, and a rank decision there describes the instant, not the mechanism.
# The generic rank is measured at one configuration from nearby assembled ones
# (`nearby_configurations`, used by `jmbs.solvability`'s report and by `kinematics`),
# and along a motion as the largest rank met (`singular_points`).
# Nearby configurations sampled for the generic rank, and the step to them (a fraction
# of the bodies' characteristic lengths in translation; radians in rotation).
GENERIC_SAMPLES = 4


GENERIC_STEP = 1e-2


# A local minimum of the rank-revealing value along a motion whose flanks, extended,
# meet below this fraction of it is sharper than the samples resolve: a singular
# configuration is passed (or one closer than the samples can tell).
V_FRACTION = 0.25


def released_rows(model: Model) -> np.ndarray:
    """Mask `(nc,)` of the rows held while the mechanism moves freely: the holonomic
    rows of every element but the drivers."""
    mask = np.array(model.holonomic_rows)
    for spec, (a, b) in zip(model.element_specs, model.element_rows):
        if isinstance(spec, DriverSpec):
            mask[a:b] = False
    return mask


def nearby_configurations(model: Model, q, t, samples: int = GENERIC_SAMPLES,
                          step: float = GENERIC_STEP, seed: int = 0) -> list[np.ndarray]:
    """Host-side: up to `samples` configurations a `step` away from `q` along the free
    motions of the mechanism with its drivers released (random directions, fixed by
    `seed`, in the null space of the held rows of `C` with translations measured in
    the bodies' characteristic lengths), each assembled on the held rows; those whose
    assembly did not converge are left out. None when the mechanism cannot move.

    The null space on the host, the units and the guesses one small program each, the
    assemblies `assemble`'s program one by one (run op by op, the units and guesses
    compiled some 60 programs of one operation each: 1.4 s of a first
    `jmbs.solvability(bricard())`)."""
    hold = released_rows(model)
    unit = np.asarray(velocity_units_jit(model))
    C = np.asarray(constraint_matrix(model, q, t))[hold] * unit[None, :]
    s, Vt = (np.linalg.svd(C)[1:] if C.shape[0] else (np.zeros(0), np.eye(model.nv)))
    rank = int(np.sum(s > GAUSS_NEWTON_RTOL * s[0])) if s.size else 0
    N = Vt[rank:].T
    if N.shape[1] == 0:
        return []
    every, rows = (True,) * model.nv, tuple(bool(h) for h in hold)
    d = np.random.default_rng(seed).standard_normal((samples, N.shape[1])) @ N.T
    d = step * d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), TINY)
    out = []
    for guess in np.asarray(_retracted(model, jnp.asarray(q, float), jnp.asarray(d * unit))):
        res = assemble_jit(model, guess, jnp.asarray(t, float), every, 1e-12, 50, rows)
        if bool(res.converged):
            out.append(np.asarray(res.q))
    return out


@RunOnce
def _retracted(model: Model, q, dvs):
    """`q` moved by each velocity-space increment of `dvs` `(k, nv)` (one program)."""
    return jax.vmap(lambda dv: retract(model, q, dv))(dvs)


def generic_rank(model: Model, q, t, rank: int | None = None, nearby=None) -> int:
    """Host-side: the mechanism's generic rank near `q`, the rank of its constraints at
    almost every configuration around it: the largest `constraint_rank` at `q` (or the
    given `rank` there) and at the `nearby_configurations` (a driver only prescribes
    where the mechanism is: its rows are there at the nearby configurations too). Equal
    to the rank at `q` for a rigid structure (no motion). Along a motion or over a batch
    of configurations, the generic rank is likewise the largest rank met
    (`singular_points`, `SolvabilitySweep`).

    `nearby`: the ranks at configurations near `q` on its motion that the caller has
    decided already (the samples of `sample_configurations`), used instead of the
    `nearby_configurations`.

    The rank margin cannot tell a singular configuration from a redundant mechanism
    (a configuration can be exactly singular with a large margin); this can."""
    rank = constraint_rank(model, q, t) if rank is None else int(rank)
    if nearby is None:
        nearby = [constraint_rank(model, x, t) for x in nearby_configurations(model, q, t)]
    return max([rank, *(int(r) for r in np.asarray(nearby).ravel())])


def singular_points(ts, ranks, values) -> tuple[int, list[tuple[float, str]]]:
    """Host-side, along a motion: `(generic rank, events)` from the times `ts (T,)`, the
    ranks `(T,)` and the relative rank-revealing values `(T, k)` there. Each event is
    `(t, "at")` for a saved time whose rank is below the generic rank (the largest
    met), or `(t, "through")` for a dip of the generic rank's value between saved
    times whose flanks, extended, meet near zero far below the sampled minimum (a
    crossing dips like `|t - t*|`; a smooth minimum that the samples resolve does not)."""
    ts, ranks, values = np.asarray(ts, float), np.asarray(ranks), np.asarray(values, float)
    if ranks.size == 0:
        return 0, []
    generic = int(ranks.max())
    events = [(float(t), "at") for t in ts[ranks < generic]]
    if generic == 0 or values.shape[-1] < generic or ts.size < 5:
        return generic, events
    x, v = np.abs(ts - ts[0]), values[:, generic - 1]
    full = ranks == generic
    for k in range(2, ts.size - 2):
        if not (full[k - 2:k + 3].all() and v[k] <= v[k - 1] and v[k] <= v[k + 1]):
            continue
        dx_l, dx_r = x[k - 1] - x[k - 2], x[k + 2] - x[k + 1]
        if dx_l <= 0 or dx_r <= 0:
            continue
        sl, sr = (v[k - 1] - v[k - 2]) / dx_l, (v[k + 2] - v[k + 1]) / dx_r
        if sl >= 0 or sr <= 0:
            continue
        xc = (v[k + 1] - v[k - 1] + sl * x[k - 1] - sr * x[k + 1]) / (sl - sr)
        if v[k - 1] + sl * (xc - x[k - 1]) < V_FRACTION * v[k]:
            events.append((float(np.interp(xc, x, ts)), "through"))
    return generic, sorted(events, key=lambda e: abs(e[0] - ts[0]))


def warn_singular(where: str, generic: int, events: list[tuple[float, str]], note: str = "") -> None:
    """One warning listing where a motion is at or passes a singular configuration
    (`note` appended)."""
    if not events:
        return
    shown = ", ".join(f"t = {t:.6g} ({'at' if kind == 'at' else 'passes'})" for t, kind in events[:5])
    more = f" and {len(events) - 5} more" if len(events) > 5 else ""
    warn_user(f"{where}: the motion is at or passes a singular configuration (the rank of C "
              f"drops below its generic rank {generic}) at {shown}{more}; there the drivers "
              "may not determine the motion, the motion may branch, and the reactions' "
              f"uniqueness follows the lower rank{note}")
