"""Batched solvability: sweeps over configurations, events along a path, and the path
of a driver's coordinate (host-side)."""

import dataclasses
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from .._display import sweep_html, sweep_line
from .._kinematics import assemble_jit
from .._linalg import numerical_rank
from .._misc import as_configuration, warn_user
from .._model import Model
from .._progress import tqdm
from .._rank import equilibrated_matrix
from .analysis import component_names
from .base import MARGINAL_DECADES, Decisions
from .registry import default_uniqueness, resolve_method
from .report import decisions_at

DEFAULT_BATCH = 2048
# On an accelerator a sweep is bound by launches and transfers until batches are large:
# the mobile robot's 1,000,000 configurations (benchmarks/bench_gpu.py, one H200) took
# 2.75 s in batches of 2048 and 1.50 s in batches of 131072 (the DCA). Batches hold about
# ACCELERATOR_BATCH_BYTES of constraint matrices, between DEFAULT_BATCH and ACCELERATOR_BATCH.
ACCELERATOR_BATCH = 131072
ACCELERATOR_BATCH_BYTES = 2**30


def sweep_defaults(model: Model, backend: str) -> tuple[str, int]:
    """The method and batch size of `solvability_sweep` when none is given, on JAX's
    `backend`: on the CPU, the method of `jmbs.solvability` and `DEFAULT_BATCH`; on an
    accelerator the divide-and-conquer analysis, whose small factorizations batch well
    there, where the dense methods' do not (one H200, the mobile robot's sweep: the
    pivoted QR of "nullspace" runs on the host, 14 us per configuration; "svd" 2.3 us;
    "dca" 1.5 us, 0.71-0.79 us with its wide connections by Jacobi), and batches of about
    `ACCELERATOR_BATCH_BYTES` of matrices (262144 instead of 131072: 1.02 against 0.79 us)."""
    if backend == "cpu":
        return default_uniqueness(model), DEFAULT_BATCH
    per_config = 8 * max(model.nc, 1) * model.nv
    return "dca", int(np.clip(ACCELERATOR_BATCH_BYTES // per_config, DEFAULT_BATCH, ACCELERATOR_BATCH))


class SolvabilitySweep:
    """Decisions for a batch of configurations (host-side NumPy arrays).

    - `rank`, `redundancy`, `dof`, `rank_margin`: `(batch,)`.
    - `unique`, `criterion`, `margin`: `(batch, n_elements)`, columns in
      `element_names` order.
    - `component_unique`: `(batch, nc)`, columns in row order.
    - `generic_rank`: the largest rank in the batch among the decisions with a rank
      margin of at least `MARGINAL_DECADES` (all of them if none has it: a marginal
      decision next to a singular configuration may also come out one too high);
      `singular (batch,)`: the configurations whose rank is below it (singular
      configurations, where the decisions describe the instant rather than the
      mechanism).
    """

    def __init__(self, model: Model, method: str, dec: Decisions):
        self.model, self.method = model, method
        self.element_names = model.element_names
        self.rank = np.asarray(dec.rank)
        self.redundancy = model.nc - self.rank
        self.dof = model.nv - self.rank
        self.rank_margin = np.asarray(dec.rank_margin)
        self.rank_values = np.asarray(dec.rank_values)
        clear = self.rank_margin >= MARGINAL_DECADES
        self.generic_rank = int((self.rank[clear] if clear.any() else self.rank).max(initial=0))
        self.singular = self.rank < self.generic_rank
        self.unique = np.asarray(dec.unique)
        self.criterion = np.asarray(dec.criterion)
        self.margin = np.asarray(dec.margin)
        self.component_unique = np.asarray(dec.component_unique)
        self.component_margin = np.asarray(dec.component_margin)

    def __repr__(self) -> str:
        return sweep_line(self)

    def _repr_html_(self) -> str:
        return sweep_html(self)

    def __len__(self) -> int:
        return len(self.rank)

    def is_unique(self, name: str) -> np.ndarray:
        """`(batch,)` decisions for element `name`."""
        self.model.element(name)  # raises for an unknown name, listing the known ones
        return self.unique[:, self.element_names.index(name)]

    def unique_components(self, name: str) -> np.ndarray:
        """`(batch, m)` decisions for the components of element `name`."""
        return self.component_unique[:, self.model.rows(name)]

    def signature(self) -> np.ndarray:
        """One row per configuration that changes whenever a decision or the rank does."""
        return np.concatenate([self.rank[:, None], self.unique, self.component_unique], axis=1)


def solvability_sweep(model: Model, qs, ts=None, *, method=None, batch_size: int | None = None,
                      progress: bool | None = None) -> SolvabilitySweep:
    """`jmbs.solvability` for a batch of configurations, jitted and vmapped.

    **Arguments:**
    - `model`: the model.
    - `qs`: configurations `(batch, nq)`.
    - `ts`: times `(batch,)` or a scalar (default 0).
    - `method`: as in `jmbs.solvability`; by default its default on the CPU and the
      divide-and-conquer analysis (`"dca"`, the same decisions) on an accelerator, where
      it is the fastest (`sweep_defaults`).
    - `batch_size`: configurations per compiled call (default 2048 on the CPU; on an
      accelerator up to 131072, about 1 GiB of constraint matrices); memory stays
      bounded by one chunk. The last chunk is padded, so one compilation serves all.
    - `progress`: show a progress bar (default: when there is more than one chunk).

    **Returns:** a `SolvabilitySweep`.

    **Raises:** `ValueError` for configurations of the wrong size, with NaN or none
    at all, times of the wrong shape or with NaN, or a `batch_size` that is not a
    positive int.
    """
    default_method, default_batch = sweep_defaults(model, jax.default_backend())
    m = resolve_method(default_method if method is None else method, model)
    qs = as_configuration(model, qs, "qs")
    if qs.ndim != 2:
        raise ValueError(f"qs must have shape (batch, {model.nq}); got {qs.shape}")
    n = qs.shape[0]
    if n == 0:
        raise ValueError(f"qs is empty (shape {qs.shape}); pass at least one configuration")
    ts = np.asarray(0.0 if ts is None else ts, dtype=float)
    if ts.shape not in ((), (n,)):
        raise ValueError(f"ts has shape {ts.shape}, but qs has {n} configurations; pass one time "
                         f"per configuration, shape ({n},), or a scalar")
    ts = np.broadcast_to(ts, (n,))
    if not np.isfinite(ts).all():
        raise ValueError("ts contains NaN or inf; pass finite times")
    if batch_size is None:
        batch_size = default_batch
    elif isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int (configurations per compiled call); "
                         f"got {batch_size!r}")
    bs = min(int(batch_size), n)
    n_chunks = math.ceil(n / bs)
    show = n_chunks > 1 if progress is None else progress
    out, pending = None, None

    def collect(start, dec):
        """Chunk `dec`'s decisions into `out` from `start` (allocated at the first chunk)."""
        nonlocal out
        dec = jax.device_get(dec)
        if out is None:
            out = jax.tree.map(lambda x: np.empty((n,) + x.shape[1:], x.dtype), dec)
        size = min(bs, n - start)
        for o, x in zip(jax.tree.leaves(out), jax.tree.leaves(dec)):
            o[start:start + size] = x[:size]

    # One chunk in flight while the previous one's decisions come back to the host.
    for k in tqdm(range(n_chunks), desc="solvability sweep", unit="chunk", disable=not show):
        q, t = qs[k * bs:(k + 1) * bs], ts[k * bs:(k + 1) * bs]
        pad = bs - len(q)
        if pad:
            q = np.concatenate([q, np.repeat(q[-1:], pad, axis=0)])
            t = np.concatenate([t, np.repeat(t[-1:], pad)])
        dec = m.decisions_batch(model, jnp.asarray(q), jnp.asarray(t))
        jax.tree.map(lambda x: x.copy_to_host_async(), dec)
        if pending is not None:
            collect(*pending)
        pending = (k * bs, dec)
    collect(*pending)
    return SolvabilitySweep(model, m.name, out)


@dataclasses.dataclass(frozen=True)
class PathEvent:
    """Where the rank or a decision changes along a path.

    `kind` is `"change"` (the decisions differ on the two sides of `s`),
    `"singular"` (an isolated configuration at `s` with a lower rank than on
    both sides) or `"near_singular"` (a local minimum of the rank-revealing
    value whose rank decision is within `MARGINAL_DECADES` of its tolerance:
    the path passes a singular configuration closer than the configurations
    are accurate, or the tolerance is too tight to call it). `s_before`/`s_after`
    bracket it to the requested width `xtol`; `rank_before`, `rank_at`,
    `rank_after` are the ranks there; `elements` names the elements whose
    reaction decision differs across the event, `components` the reaction
    components (`"element.component"`) whose decision differs; `rank_margin` is
    the rank decision's margin at `s` in decimal digits.
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
    components: tuple[str, ...] = ()

    def describe(self, looser_tolerance: str = "a method with rtol=1e-6") -> str:
        """One line of prose: what happens at the event, e.g. `"singular configuration,
        rank 12 -> 11 -> 12; reactions that change: O0, B0"`; a near-singular event
        suggests `looser_tolerance` (how the caller sets a looser rank tolerance)."""
        if self.kind == "singular":
            what = (f"singular configuration, rank {self.rank_before} -> {self.rank_at} -> "
                    f"{self.rank_after}")
        elif self.kind == "near_singular":
            what = (f"near-singular configuration: the rank decision is {self.rank_margin:.1f} "
                    "digits from its tolerance (a singular configuration the grid passes "
                    f"closely; {looser_tolerance} may show the rank drop)")
        else:
            what = f"decisions change, rank {self.rank_before} -> {self.rank_after}"
        return what + "".join(f"; {label}: {', '.join(names)}" for names, label in
                              ((self.elements, "reactions that change"),
                               (self.components, "components")) if names)


@dataclasses.dataclass
class SolvabilityPath:
    """Result of `jmbs.solvability_path`: the grid, its sweep and the located events."""

    s: np.ndarray
    sweep: SolvabilitySweep
    events: list[PathEvent]


def solvability_path(model: Model, path: Callable, s, *, method=None, xtol: float = 1e-10,
                     progress: bool | None = None, tol: float | None = None) -> SolvabilityPath:
    """Locate where the rank or a uniqueness decision changes along a one-parameter
    path of configurations.

    The grid `s` is swept; between neighbours whose decisions differ the change
    is bisected to the width `xtol` in the path parameter. Isolated singular
    configurations, which a grid almost never hits, are found from the
    interior local minima of the smallest rank-revealing value (the
    method's `rank_values[r - 1]` at the grid's largest rank `r`): each is
    refined by golden-section search to `xtol` and reported if its rank is
    lower, or as near-singular if its rank decision is marginal (configurations
    assembled by Newton near a singular one are accurate only to about the
    square root of the assembly tolerance, so the rank may not drop there).

    **Arguments:**
    - `model`: the model.
    - `path`: `s -> q` or `s -> (q, t)`, e.g. a driver's motion followed by
      `jmbs.assemble`, or a `jmbs.driver_path`; called on the host.
    - `s`: increasing grid of the path parameter.
    - `method`: as in `jmbs.solvability`.
    - `xtol`: width in `s` to which each event is bracketed.
    - `progress`: a progress bar over the grid.
    - `tol`: deprecated name of `xtol`.

    **Returns:** a `SolvabilityPath` with `s`, `sweep` and `events`.

    **Raises:** `ValueError` for a grid that is not increasing, or configurations of
    the wrong size or with NaN.
    """
    if tol is not None:
        warn_user("solvability_path(tol=...) is deprecated: the bracket width is now "
                  "called xtol", DeprecationWarning)
        xtol = tol
    m = resolve_method(default_uniqueness(model) if method is None else method, model)
    s = np.asarray(s, dtype=float)
    if s.ndim != 1 or len(s) < 2 or not (np.diff(s) > 0).all():
        raise ValueError("s must be an increasing 1-D grid with at least two points")

    def evaluate(x: float):
        out = path(x)
        q, t = out if isinstance(out, tuple) else (out, 0.0)
        return as_configuration(model, q, f"path({x})"), float(t)

    points = [evaluate(x) for x in tqdm(s, desc="path", disable=not progress)]
    sweep = solvability_sweep(model, np.stack([p[0] for p in points]), np.array([p[1] for p in points]),
                              method=m, progress=False)
    walk = _PathWalk(model, lambda x: decisions_at(model, m, *evaluate(x)), xtol)
    events = walk.changes(s, sweep) + walk.singular_points(s, sweep)
    events.sort(key=lambda e: e.s)
    return SolvabilityPath(s, sweep, events)


@dataclasses.dataclass(frozen=True)
class _PathWalk:
    """`solvability_path`'s two searches along the path, given `probe(x)`, the decisions
    at one point of it."""

    model: Model
    probe: Callable
    xtol: float

    def changes(self, s: np.ndarray, sweep: "SolvabilitySweep") -> list[PathEvent]:
        """Every change of a decision between grid neighbours, bisected to `xtol`."""
        events, sigs = [], sweep.signature()
        for k in range(len(s) - 1):
            if (sigs[k] == sigs[k + 1]).all():
                continue
            a, da, end, dend = s[k], self.probe(s[k]), s[k + 1], self.probe(s[k + 1])
            # Bisection keeps the left end's decisions on the left; after each located
            # change, go on from its right side until the interval's end is reached.
            while not (_signature(da) == _signature(dend)).all():
                b, db = end, dend
                while b - a > self.xtol:
                    mid = 0.5 * (a + b)
                    dm = self.probe(mid)
                    if (_signature(dm) == _signature(da)).all():
                        a, da = mid, dm
                    else:
                        b, db = mid, dm
                events.append(PathEvent("change", 0.5 * (a + b), a, b, int(da.rank), int(db.rank),
                                        int(db.rank), **self.changed(da, db)))
                a, da = b, db
        return events

    def singular_points(self, s: np.ndarray, sweep: "SolvabilitySweep") -> list[PathEvent]:
        """Interior local minima of the smallest rank-revealing value at the grid's largest
        rank, refined by golden section: singular where the rank drops, near-singular
        where the decision is marginal."""
        r, events, sigs = int(sweep.rank.max()), [], sweep.signature()
        if r == 0:
            return events
        value = sweep.rank_values[:, r - 1]
        for k in range(1, len(s) - 1):
            if not (value[k] <= value[k - 1] and value[k] <= value[k + 1]):
                continue
            if not ((sigs[k - 1] == sigs[k]).all() and (sigs[k] == sigs[k + 1]).all()):
                continue  # a change between grid points, located by `changes`
            x, d = _golden_minimum(lambda x: float(self.probe(x).rank_values[r - 1]), s[k - 1],
                                   s[k + 1], self.xtol)
            dx = self.probe(x)
            lower, marginal = int(dx.rank) < int(sweep.rank[k]), float(dx.rank_margin) < MARGINAL_DECADES
            if lower or marginal:
                events.append(PathEvent("singular" if lower else "near_singular", x, x - d, x + d,
                                        int(sweep.rank[k]), int(dx.rank), int(sweep.rank[k]),
                                        rank_margin=float(dx.rank_margin),
                                        **self.changed(self.probe(s[k]), dx)))
        return events

    def changed(self, d0: Decisions, d1: Decisions) -> dict:
        """The elements and the components whose decision differs between `d0` and `d1`."""
        rows = component_names(self.model)
        return {"elements": tuple(n for n, a, b in zip(self.model.element_names, d0.unique, d1.unique)
                                  if a != b),
                "components": tuple(n for n, a, b in zip(rows, d0.component_unique,
                                                         d1.component_unique) if a != b)}


def _signature(d: Decisions) -> np.ndarray:
    return np.concatenate([np.atleast_1d(d.rank), d.unique, d.component_unique])


# Assembly tolerance of the configurations along a driver path. Near a singular
# configuration an assembled q is accurate only to about the square root of the
# tolerance, so a looser one would hide rank drops that 1e-14 shows (with a rank
# tolerance of 1e-6).
DRIVER_PATH_TOL = 1e-14
# At most this many continuation steps from the reference configuration (s = 0) to
# the start of the grid.
RAMP_STEPS = 100


def driver_names(model: Model) -> list[str]:
    """The names of the model's drivers, in element order."""
    return [s.name for s in model.element_specs if s.kind == "driver"]


def assemble_along(model: Model, ts, q=None, *, what: str = "t", tol: float = DRIVER_PATH_TOL,
                   max_steps: int = 100, progress: bool = False,
                   released: tuple[str, ...] = ()) -> np.ndarray:
    """Configurations `(len(ts), nq)` by continuation: each assembled (`jmbs.assemble`)
    at its time from the previous one, the first from `q` (default `model.q0`).
    With position freedom left besides the drivers (a mobile robot's platform), each
    is the nearest to the previous one. The `released` drivers' rows are not solved
    (their coordinates follow the others).

    **Raises:** `RuntimeError` naming `what` and the time where assembly did not
    converge.
    """
    rows = model.holonomic_rows.copy()
    for name in released:
        rows[model.rows(name)] = False
    every, rows = (True,) * model.nv, tuple(bool(r) for r in rows)
    q, qs = model.q0 if q is None else q, []
    for t in tqdm(ts, desc="assembly", unit="configuration", delay=1.0, leave=False,
                  disable=not progress):
        res = assemble_jit(model, jnp.asarray(q, float), jnp.asarray(float(t)), every, tol,
                            max_steps, rows)
        if not bool(res.converged):
            raise RuntimeError(f"assembly did not converge at {what} = {float(t):.6g} (max |Phi| = "
                               f"{float(res.residual):.2g}): the mechanism may not reach it (a dead "
                               "centre, the end of its range), or the step from the previous "
                               "configuration is too large")
        q = np.asarray(res.q)
        qs.append(q)
    return np.array(qs).reshape(len(qs), model.nq)


@dataclasses.dataclass(frozen=True, eq=False)
class DriverPath:
    """The configurations along one driver's coordinate: a path for
    `jmbs.solvability_path` (`path(x) -> (q, x)`).

    - `model`: the model whose time is the swept coordinate (the driver `driver`
      follows `f(t) = t`, the other drivers hold 0, their reference value, except
      the `released` ones); analyse the path's configurations with it. Along time
      (`jmbs.time_path`): the model itself, `driver` None.
    - `driver`, `unit` (`"rad"`, `"m"`, or `"s"` along time).
    - `s`, `qs`: the grid and its configurations `(len(s), nq)`.
    - `released`: drivers that the swept one makes redundant (an overactuated
      model): their coordinates follow instead of holding, which would lock the
      mechanism.
    """

    model: Model
    driver: str | None
    unit: str
    s: np.ndarray
    qs: np.ndarray
    released: tuple[str, ...] = ()

    def __call__(self, x: float) -> tuple[np.ndarray, float]:
        """The configuration at driver coordinate `x` (a grid point's, or assembled from
        the nearest grid point's) and its time `x`."""
        k = int(np.argmin(np.abs(self.s - x)))
        if x == self.s[k]:
            return self.qs[k], x
        return assemble_along(self.model, [x], self.qs[k], what=self.driver or "t",
                              released=self.released)[0], x


def _hold(t):
    return 0.0 * t


def _follow(t):
    return t


def redundant_drivers(model: Model, driver: str) -> tuple[str, ...]:
    """The other drivers whose rows depend on the rest at the reference configuration
    once `driver` is held (overactuation): moving `driver` with them held would lock
    the mechanism, so a sweep releases them. One at a time, in order, so that of two
    drivers redundant with each other only one is released."""
    C = equilibrated_matrix(model, model.q0, 0.0)
    keep = model.holonomic_rows.copy()
    rank, released = numerical_rank(C[keep]), []
    for name in driver_names(model):
        if name == driver:
            continue
        trial = keep.copy()
        trial[model.rows(name)] = False
        if numerical_rank(C[trial]) == rank:
            keep = trial
            released.append(name)
    return tuple(released)


def time_path(model: Model, ts, *, progress: bool = False) -> DriverPath:
    """The configurations along time: every driver follows its motion over the
    increasing grid `ts`, each configuration assembled from the previous one (a
    sweep along time: `jmbs.solvability_path(model, p, ts)`).

    **Raises:** `ValueError` for a grid that is not increasing; `RuntimeError` where
    assembly fails.
    """
    ts = np.asarray(ts, dtype=float)
    if ts.ndim != 1 or len(ts) < 2 or not (np.diff(ts) > 0).all():
        raise ValueError("ts must be an increasing 1-D grid with at least two points")
    q0 = assemble_along(model, [ts[0]], what="t")[0]
    return DriverPath(model, None, "s", ts, assemble_along(model, ts, q0, progress=progress))


def driver_path(model: Model, driver: str, s, *, progress: bool = False) -> DriverPath:
    """Move one driver's coordinate over the grid `s`, the other drivers holding their
    reference values (those it makes redundant, in an overactuated model, follow:
    `redundant_drivers`), and assemble each configuration from the previous one.

    Time becomes the swept coordinate (see `DriverPath.model`). The first
    configuration is reached from the reference configuration (`s = 0`) by at most
    `RAMP_STEPS` continuation steps; position freedom left besides the drivers
    follows the nearest configuration; velocity constraints (knife edges) do not
    restrict positions.

    **Arguments:**
    - `model`: a model with drivers.
    - `driver`: the name of the driver to move.
    - `s`: increasing grid of its coordinate (rad for an angle, m for a slide).
    - `progress`: a progress bar over the assembly.

    **Returns:** a `DriverPath`; `jmbs.solvability_path(p.model, p, s)` locates the
    events along it.

    **Raises:** `ValueError` for a model without drivers, an unknown driver or a
    grid that is not increasing; `RuntimeError` where assembly fails.
    """
    drivers = driver_names(model)
    if not drivers:
        raise ValueError("the model has no drivers: a driver path moves a driver's coordinate; "
                         "add a driver, or analyse single configurations")
    if driver not in drivers:
        raise ValueError(f"unknown driver {driver!r}; the model's drivers are {', '.join(drivers)}")
    s = np.asarray(s, dtype=float)
    if s.ndim != 1 or len(s) < 2 or not (np.diff(s) > 0).all():
        raise ValueError("s must be an increasing 1-D grid with at least two points")
    # Module-level motions: models swept along the same driver are equal, so they
    # share compiled code.
    swept = model.with_motions({d: _hold for d in drivers} | {driver: _follow})
    unit = "rad" if model.element(driver).components == ("M",) else "m"
    n_ramp = min(RAMP_STEPS, math.ceil(abs(s[0]) / (s[1] - s[0])))
    ramp = np.linspace(0.0, s[0], n_ramp + 1)[:-1]
    released = redundant_drivers(model, driver)
    qs = assemble_along(swept, np.concatenate([ramp, s]), what=driver, progress=progress,
                        released=released)
    return DriverPath(swept, driver, unit, s, qs[len(ramp):], released)


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
