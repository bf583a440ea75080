"""Batched solvability: sweeps over configurations, and events along a path."""

import dataclasses
import math
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from tqdm.auto import tqdm

from .._model import Model
from .base import MARGINAL_DECADES, AbstractSolvabilityMethod, Decisions
from .equilibrate import scale
from .qr import QR
from .report import characteristic_lengths, check_configuration, decisions_at, element_sets, resolve_method

DEFAULT_BATCH = 2048


@eqx.filter_jit
def _matrices(model: Model, method: AbstractSolvabilityMethod, qs, ts):
    return jax.vmap(lambda q, t: method.matrix(model, q, t))(qs, ts)


@eqx.filter_jit
def _decide_batch(method: AbstractSolvabilityMethod, Cs, L, dim: int, sets) -> Decisions:
    return jax.vmap(lambda C: method.decide(scale(C, L, dim), sets))(Cs)


class SolvabilitySweep:
    """Decisions for a batch of configurations (host-side NumPy arrays).

    - `rank`, `redundancy`, `dof`, `rank_margin`: `(batch,)`.
    - `unique`, `criterion`, `margin`: `(batch, n_elements)`, columns in
      `element_names` order.
    - `component_unique`: `(batch, nc)`, columns in row order.
    """

    def __init__(self, model: Model, method: str, dec: Decisions):
        self.model, self.method = model, method
        self.element_names = model.element_names
        self.rank = np.asarray(dec.rank)
        self.redundancy = model.nc - self.rank
        self.dof = model.nv - self.rank
        self.rank_margin = np.asarray(dec.rank_margin)
        self.rank_values = np.asarray(dec.rank_values)
        self.unique = np.asarray(dec.unique)
        self.criterion = np.asarray(dec.criterion)
        self.margin = np.asarray(dec.margin)
        self.component_unique = np.asarray(dec.component_unique)
        self.component_margin = np.asarray(dec.component_margin)

    def __len__(self) -> int:
        return len(self.rank)

    def is_unique(self, name: str) -> np.ndarray:
        """`(batch,)` decisions for element `name`."""
        return self.unique[:, self.model._element_index(name)]

    def unique_components(self, name: str) -> np.ndarray:
        """`(batch, m)` decisions for the components of element `name`."""
        return self.component_unique[:, self.model.rows(name)]

    def signature(self) -> np.ndarray:
        """One row per configuration that changes whenever a decision or the rank does."""
        return np.concatenate([self.rank[:, None], self.unique, self.component_unique], axis=1)


def solvability_sweep(model: Model, qs, ts=None, *, method="nullspace", batch_size: int | None = None,
                      progress: bool | None = None) -> SolvabilitySweep:
    """`jmbs.solvability` for a batch of configurations, jitted and vmapped.

    **Arguments:**
    - `model`: the model.
    - `qs`: configurations `(batch, nq)`.
    - `ts`: times `(batch,)` or a scalar (default 0).
    - `method`: as in `jmbs.solvability`.
    - `batch_size`: configurations per compiled call (default 2048); memory stays
      bounded by one chunk. The last chunk is padded, so one compilation serves all.
    - `progress`: show a progress bar (default: when there is more than one chunk).

    **Returns:** a `SolvabilitySweep`.

    **Raises:** `ValueError` for configurations of the wrong size or with NaN.
    """
    m = resolve_method(method)
    qs = check_configuration(model, qs, "qs")
    if qs.ndim != 2:
        raise ValueError(f"qs must have shape (batch, {model.nq}); got {qs.shape}")
    n = qs.shape[0]
    ts = np.broadcast_to(np.asarray(0.0 if ts is None else ts, dtype=float), (n,))
    if not np.isfinite(ts).all():
        raise ValueError("ts contains NaN or inf; pass finite times")
    bs = min(batch_size or DEFAULT_BATCH, max(n, 1))
    sets = element_sets(model)
    L = characteristic_lengths(model)
    # Methods that analyse the same matrix share its compiled batch code.
    route = m if type(m).matrix is not AbstractSolvabilityMethod.matrix else QR()
    chunks = []
    n_chunks = math.ceil(n / bs)
    show = n_chunks > 1 if progress is None else progress
    for k in tqdm(range(n_chunks), desc="solvability sweep", unit="chunk", disable=not show):
        q, t = qs[k * bs:(k + 1) * bs], ts[k * bs:(k + 1) * bs]
        pad = bs - len(q)
        if pad:
            q = np.concatenate([q, np.repeat(q[-1:], pad, axis=0)])
            t = np.concatenate([t, np.repeat(t[-1:], pad)])
        Cs = _matrices(model, route, jnp.asarray(q), jnp.asarray(t))
        dec = jax.device_get(_decide_batch(m, Cs, L, model.dim, sets))
        chunks.append(jax.tree.map(lambda x: x[: bs - pad], dec))
    dec = jax.tree.map(lambda *x: np.concatenate(x), *chunks)
    return SolvabilitySweep(model, m.name, dec)


@dataclasses.dataclass(frozen=True)
class PathEvent:
    """Where the rank or a decision changes along a path.

    `kind` is `"change"` (the decisions differ on the two sides of `s`),
    `"singular"` (an isolated configuration at `s` with a lower rank than on
    both sides) or `"near_singular"` (a local minimum of the rank-revealing
    value whose rank decision is within `MARGINAL_DECADES` of its tolerance:
    the path passes a singular configuration closer than the configurations
    are accurate, or the tolerance is too tight to call it). `s_before`/`s_after`
    bracket it to the requested tolerance; `rank_before`, `rank_at`,
    `rank_after` are the ranks there; `elements` names the elements whose
    reaction decision differs across the event; `rank_margin` is the rank
    decision's margin at `s` in decimal digits.
    """

    kind: str
    s: float
    s_before: float
    s_after: float
    rank_before: int
    rank_at: int
    rank_after: int
    elements: tuple[str, ...]
    rank_margin: float = math.inf


@dataclasses.dataclass
class SolvabilityPath:
    """Result of `jmbs.solvability_path`: the grid, its sweep and the located events."""

    s: np.ndarray
    sweep: SolvabilitySweep
    events: list[PathEvent]


def solvability_path(model: Model, path: Callable, s, *, method="nullspace", tol: float = 1e-10,
                     progress: bool | None = None) -> SolvabilityPath:
    """Locate where the rank or a uniqueness decision changes along a one-parameter
    path of configurations.

    The grid `s` is swept; between neighbours whose decisions differ the change
    is bisected to `tol` in the path parameter. Isolated singular
    configurations, which a grid almost never hits, are found from the
    interior local minima of the smallest rank-revealing value (the
    method's `rank_values[r - 1]` at the grid's largest rank `r`): each is
    refined by golden-section search to `tol` and reported if its rank is
    lower, or as near-singular if its rank decision is marginal (configurations
    assembled by Newton near a singular one are accurate only to about the
    square root of the assembly tolerance, so the rank may not drop there).

    **Arguments:**
    - `model`: the model.
    - `path`: `s -> q` or `s -> (q, t)`, e.g. a driver's motion followed by
      `jmbs.assemble`; called on the host.
    - `s`: increasing grid of the path parameter.
    - `method`: as in `jmbs.solvability`.
    - `tol`: width to which each event is bracketed.

    **Returns:** a `SolvabilityPath` with `s`, `sweep` and `events`.
    """
    m = resolve_method(method)
    s = np.asarray(s, dtype=float)
    if s.ndim != 1 or len(s) < 2 or not (np.diff(s) > 0).all():
        raise ValueError("s must be an increasing 1-D grid with at least two points")
    sets = element_sets(model)

    def evaluate(x: float):
        out = path(x)
        q, t = out if isinstance(out, tuple) else (out, 0.0)
        return check_configuration(model, q, f"path({x})"), float(t)

    points = [evaluate(x) for x in tqdm(s, desc="path", disable=not progress)]
    sweep = solvability_sweep(model, np.stack([p[0] for p in points]), np.array([p[1] for p in points]),
                              method=m, progress=False)

    def decide(x: float) -> Decisions:
        return decisions_at(model, m, *evaluate(x), sets)

    def sig(d: Decisions) -> np.ndarray:
        return np.concatenate([np.atleast_1d(d.rank), d.unique, d.component_unique])

    def changed(d0, d1) -> tuple[str, ...]:
        return tuple(n for n, a, b in zip(model.element_names, d0.unique, d1.unique) if a != b)

    events = []
    sigs = sweep.signature()
    for k in range(len(s) - 1):
        if (sigs[k] == sigs[k + 1]).all():
            continue
        a, da, end, dend = s[k], decide(s[k]), s[k + 1], decide(s[k + 1])
        # Bisection keeps the left end's decisions on the left; after each located
        # change, go on from its right side until the interval's end is reached.
        while not (sig(da) == sig(dend)).all():
            b, db = end, dend
            while b - a > tol:
                mid = 0.5 * (a + b)
                dm = decide(mid)
                if (sig(dm) == sig(da)).all():
                    a, da = mid, dm
                else:
                    b, db = mid, dm
            events.append(PathEvent("change", 0.5 * (a + b), a, b, int(da.rank), int(db.rank),
                                    int(db.rank), changed(da, db)))
            a, da = b, db

    r = int(sweep.rank.max())
    if r > 0:
        value = sweep.rank_values[:, r - 1]
        for k in range(1, len(s) - 1):
            if not (value[k] <= value[k - 1] and value[k] <= value[k + 1]):
                continue
            if not ((sigs[k - 1] == sigs[k]).all() and (sigs[k] == sigs[k + 1]).all()):
                continue  # a change between grid points, located above
            x, d = _golden_minimum(lambda x: float(decide(x).rank_values[r - 1]), s[k - 1], s[k + 1],
                                   tol)
            dx = decide(x)
            lower, marginal = int(dx.rank) < int(sweep.rank[k]), float(dx.rank_margin) < MARGINAL_DECADES
            if lower or marginal:
                d0 = decide(s[k])
                events.append(PathEvent("singular" if lower else "near_singular", x, x - d, x + d,
                                        int(sweep.rank[k]), int(dx.rank), int(sweep.rank[k]),
                                        changed(d0, dx), float(dx.rank_margin)))
    events.sort(key=lambda e: e.s)
    return SolvabilityPath(s, sweep, events)


def _golden_minimum(f: Callable[[float], float], a: float, b: float, tol: float) -> tuple[float, float]:
    """Golden-section search for a minimum of a unimodal `f` on `[a, b]`;
    returns the point and half the final bracket width."""
    g = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    while b - a > tol:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return 0.5 * (a + b), 0.5 * (b - a)
