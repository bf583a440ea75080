"""Solvability sweep benchmark: `jmbs.solvability_sweep` against a SciPy loop making the same decisions.

    .venv/bin/python benchmarks/bench_solvability.py [--quick] [--pin] [--wait-idle S]
                                                     [--blas-threads N] [--json PATH]

Two models, side by side in one process:

1. Wojtyra & Frączek's mobile robot (`jmbs.examples.mobile_robot()`, C 22 x 21): a batch
   of `--configs` configurations (default 100 000), slide `d` uniform in the steering
   range without its outer 5 %, hitch angle uniform in (-1, 1).

   - `jmbs <method>`: `jmbs.solvability_sweep(model, qs, method=<method>, progress=False)`
     for "qr", "nullspace" and "svd" (default batch size 2048); the first call's
     compilation is timed separately (first call minus a warm call of one chunk).
   - `SciPy loop`: a Python loop over `--loop-configs` configurations (default 2000) that
     gets `C` for free (computed for them beforehand by one vmapped jmbs call), and then
     makes the decisions of `jmbs.QR()`: the equilibration of
     `jmbs/_solvability/equilibrate.py` in NumPy, `scipy.linalg.qr(X, pivoting=True,
     mode="full")`, rank from `|R_ii| > 1e-8 |R_00|`, `N = Q[:, r:]`, per element `X`
     unique iff `||X_X^T N_X||_F <= 1e-6`, per component iff its row of `N` has norm
     `<= 1e-6`. Its rank and decisions are checked to equal jmbs's (qr) on every
     configuration of the loop.
   - `SciPy batched`: the same decisions with NumPy batched wherever a batch call
     exists (the equilibration and the criteria on the whole stack of `C`); only
     SciPy's pivoted QR, which has no batched form, loops. It is the stronger SciPy
     baseline on the mobile robot; the `SciPy/jmbs` ratios are against whichever SciPy
     baseline was faster in the run. Its decisions are checked too.
   - Breakdown of jmbs's time at batch sizes 512, 2048 and 8192 (qr): the sweep itself,
     `jax.jit(jax.vmap(constraint_matrix))`, the decision part
     `jax.jit(jax.vmap(QR().decide(equilibrate(model, C), sets)))`, and inside the latter
     `equilibrate`, the pivoted QR (`jax.scipy.linalg.qr`) and the criteria
     (`nullspace_decisions`, given a null-space basis), each jitted and
     vmapped on its own. The SciPy loop's time is split the same way.

2. The IFToMM A02 N-four-bar with N = 40 (C 242 x 243): cranks at angle `th` uniform
   in (0.2, 1.3) (closed form). `jmbs single`: one `jmbs.solvability(model, q,
   method="qr")` call (it also analyses `model.q0` for the reference rank);
   `jmbs sweep`: `jmbs.solvability_sweep` with `--fb-batch` configurations (default 16;
   before 04e0640 a batch of 256 needed ~29 GB); `SciPy`: the loop and the batched
   baseline above (ratios against the batched one). Decisions are checked to be equal.
   The single-configuration parts (C, equilibrate, QR, criteria, jitted) are timed too.

Times are per configuration. In each of `--rounds` rounds the variants take turns, so a
disturbance by other processes hits them alike; tables give the median of the rounds
[the minimum]. `others` is the share of the CPUs' time that other processes used during
the section (from /proc/stat); `--wait-idle S` first waits up to S seconds for an idle
machine. `--pin` restricts every thread of the process to CPU 0. `--blas-threads N` sets
OPENBLAS_NUM_THREADS (and OMP/MKL) to N before NumPy, SciPy and jaxlib load OpenBLAS;
jaxlib's CPU LAPACK kernels (pivoted QR, SVD) call the same OpenBLAS as SciPy.
"""

import os
import sys

from _blas import early_blas_threads  # noqa: E402  (the scripts run from benchmarks/)

early_blas_threads()

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.linalg as sla  # noqa: E402
from bench_assembly import cpu_busy, cpu_ticks, git_state, others_busy, pin_to_cpu0, wait_idle  # noqa: E402

import jmbs  # noqa: E402

RTOL, CTOL = 1e-8, 1e-6
# jmbs.equilibrate's Ruiz iterations and noise level (jmbs/_solvability/equilibrate.py);
# check_equilibrate fails if they drift.
RUIZ_ITERATIONS, NOISE = 1, 1e-12
METHODS = ("qr", "nullspace", "svd")
BATCHES = (512, 2048, 8192)


# --------------------------------------------------------------------------------------
# Configurations
# --------------------------------------------------------------------------------------


def robot_batch(n: int, seed: int = 0) -> np.ndarray:
    lo, hi = jmbs.examples.steering_range()
    margin = 0.05 * (hi - lo)
    rng = np.random.default_rng(seed)
    ds, hitches = rng.uniform(lo + margin, hi - margin, n), rng.uniform(-1.0, 1.0, n)
    return jmbs.examples.mobile_robot_configurations(ds, hitches)


# --------------------------------------------------------------------------------------
# The honest alternative: NumPy/SciPy, one configuration at a time
# --------------------------------------------------------------------------------------


class ScipyQR:
    """The decisions of `jmbs.QR()` for one configuration's `C`, in NumPy and SciPy."""

    def __init__(self, model):
        dim, nb = model.dim, model.n_bodies
        n_rot = model.nv // nb - dim
        L = np.asarray(model.characteristic_lengths())
        # As jmbs/_solvability/equilibrate.py: rotational columns divided by the body's
        # characteristic length, exact row normalisation, entries below NOISE (relative
        # to their row's largest) set to zero, then Ruiz iterations.
        self.col = np.concatenate([np.ones((nb, dim)), np.repeat(1.0 / L[:, None], n_rot, 1)],
                                  axis=1).ravel()
        self.ruiz, self.noise = RUIZ_ITERATIONS, NOISE
        self.rows = [(a, b) for a, b in model.element_rows]

    @staticmethod
    def _safe(x):
        return np.where(x > 0, x, 1.0)

    def equilibrate(self, C):
        X = C * self.col[None, :]
        X = X / self._safe(np.abs(X).max(axis=1))[:, None]
        X = np.where(np.abs(X) < self.noise, 0.0, X)
        for _ in range(self.ruiz):
            X = X / np.sqrt(self._safe(np.abs(X).max(axis=0)))[None, :]
            X = X / np.sqrt(self._safe(np.abs(X).max(axis=1)))[:, None]
        return X

    @staticmethod
    def nullspace(X):
        Q, R, _ = sla.qr(X, pivoting=True, mode="full")
        d = np.abs(np.diag(R))
        rank = int(np.sum(d > RTOL * d[0])) if d[0] > 0 else 0
        return rank, Q[:, rank:]

    def criteria(self, X, N):
        unique = np.array([np.linalg.norm(X[a:b].T @ N[a:b]) <= CTOL for a, b in self.rows])
        return unique, np.linalg.norm(N, axis=1) <= CTOL

    def decide(self, C):
        X = self.equilibrate(C)
        rank, N = self.nullspace(X)
        unique, components = self.criteria(X, N)
        return rank, unique, components

    def loop(self, Cs):
        return [self.decide(C) for C in Cs]

    def equilibrate_batch(self, Cs):
        """`equilibrate` of a stack `(n, nc, nv)`, in whole-array NumPy operations."""
        X = Cs * self.col[None, None, :]
        X = X / self._safe(np.abs(X).max(axis=2))[:, :, None]
        X = np.where(np.abs(X) < self.noise, 0.0, X)
        for _ in range(self.ruiz):
            X = X / np.sqrt(self._safe(np.abs(X).max(axis=1)))[:, None, :]
            X = X / np.sqrt(self._safe(np.abs(X).max(axis=2)))[:, :, None]
        return X

    def batch(self, Cs):
        """The decisions of `loop`, batched with NumPy wherever a batch call exists: the
        equilibration and the criteria work on the whole stack; only SciPy's pivoted QR
        (no batched form) loops. Null spaces of different widths are zero-padded, which
        changes no norm."""
        X = self.equilibrate_batch(np.asarray(Cs))
        ranks, Ns = zip(*(self.nullspace(x) for x in X))
        w = max(N.shape[1] for N in Ns)
        N = np.stack([np.pad(N, ((0, 0), (0, w - N.shape[1]))) for N in Ns])
        unique = np.stack([np.linalg.norm(np.einsum("nri,nrk->nik", X[:, a:b], N[:, a:b]),
                                          axis=(1, 2)) <= CTOL for a, b in self.rows], axis=1)
        components = np.linalg.norm(N, axis=2) <= CTOL
        return list(zip(ranks, unique, components))


def check_same(out: list, rank, unique, components, what: str) -> None:
    """Assert the SciPy loop's decisions equal jmbs's."""
    r = np.array([o[0] for o in out])
    u = np.stack([o[1] for o in out])
    c = np.stack([o[2] for o in out])
    for name, a, b in (("rank", r, rank), ("element", u, unique), ("component", c, components)):
        bad = np.flatnonzero((np.asarray(a) != np.asarray(b)).reshape(len(r), -1).any(axis=1))
        if len(bad):
            raise AssertionError(f"{what}: SciPy {name} decisions differ from jmbs's at "
                                 f"{len(bad)} of {len(r)} configurations (first {bad[0]})")


def check_equilibrate(model, ref: ScipyQR, Cs: np.ndarray) -> None:
    eq = jax.jit(jax.vmap(lambda C: jmbs.equilibrate(model, C)))
    err = float(np.max(np.abs(np.asarray(eq(jnp.asarray(Cs))) - np.stack([ref.equilibrate(C)
                                                                           for C in Cs]))))
    if err > 1e-12:
        raise AssertionError(f"the NumPy equilibration differs from jmbs.equilibrate by {err:.3g};"
                             " update ScipyQR to jmbs/_solvability/equilibrate.py")


# --------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------


_START = time.perf_counter()


def progress(msg: str) -> None:
    print(f"  [{time.perf_counter() - _START:5.0f} s] {msg}", flush=True)


def timed(fn) -> float:
    t0 = time.perf_counter()
    jax.block_until_ready(fn())
    return time.perf_counter() - t0


def rounds(fns: dict, counts: dict, n_rounds: int) -> dict:
    """Per-configuration µs of each `fn` (one call handles `counts[name]` configurations):
    median over the rounds and minimum; the functions take turns in each round."""
    per = {name: [] for name in fns}
    for _ in range(n_rounds):
        for name, fn in fns.items():
            per[name].append(timed(fn) / counts[name] * 1e6)
    return {name: {"median_us": statistics.median(v), "min_us": min(v), "rounds_us": v}
            for name, v in per.items()}


def first_call(fn) -> tuple[float, float]:
    """Seconds of a first (compiling) call and of the next one."""
    return timed(fn), timed(fn)


def sweep_fn(model, qs, method, bs):
    return lambda: jmbs.solvability_sweep(model, qs, method=method, batch_size=bs, progress=False)


def criteria(C, N, sets):
    """The uniqueness criteria given a null-space basis `N`, as jmbs computes them after
    its rank decision (jmbs/_solvability/base.py, `nullspace_decisions`): per set
    `||C_X^T N_X||_F` from `(C C^T) o (N N^T)`, per component the norm of its row of `N`."""
    m = sets.astype(C.dtype)
    K = jnp.einsum("ij,kj->ik", C, C) * jnp.einsum("ij,kj->ik", N, N)
    crit = jnp.sqrt(jnp.maximum(jnp.sum(jnp.einsum("si,ij->sj", m, K) * m, axis=1), 0.0))
    return crit <= CTOL, jnp.sqrt(jnp.sum(N**2, axis=1)) <= CTOL


def decision_parts(model, single: bool = False):
    """Jitted (and, unless `single`, vmapped) parts of the jmbs decision for QR, each a
    function of `(C, N, sets)`; `N` (a null-space basis, `nc x nc`) is used by the
    criteria only."""
    m = jmbs.QR()
    parts = {
        "decide": lambda C, N, s: m.decide(jmbs.equilibrate(model, C), s),
        "equilibrate": lambda C, N, s: jmbs.equilibrate(model, C),
        "pivoted QR": lambda C, N, s: jax.scipy.linalg.qr(C, mode="full", pivoting=True),
        "criteria": lambda C, N, s: criteria(C, N, s),
    }
    if single:
        return {k: jax.jit(f) for k, f in parts.items()}
    return {k: jax.jit(jax.vmap(f, in_axes=(0, 0, None))) for k, f in parts.items()}


def null_bases(model, Cs):
    """Masked `Q` of the pivoted QR of the equilibrated `Cs` (what the criteria get)."""
    m = jmbs.QR()

    def one(C):
        X = jmbs.equilibrate(model, C)
        Q, R, _ = jax.scipy.linalg.qr(X, mode="full", pivoting=True)
        d = jnp.abs(jnp.diagonal(R))
        return Q * (jnp.arange(C.shape[0]) >= jnp.sum(d > m.rtol * d[0]))[None, :]

    return jax.jit(jax.vmap(one) if Cs.ndim == 3 else one)(Cs)


# --------------------------------------------------------------------------------------
# 1. Mobile robot
# --------------------------------------------------------------------------------------


def bench_robot(args) -> dict:
    model = jmbs.examples.mobile_robot()
    sets = jmbs.element_sets(model)
    qs = robot_batch(args.configs)
    nl = min(args.loop_configs, args.configs)
    cmat = jax.jit(jax.vmap(lambda q: jmbs.constraint_matrix(model, q)))
    Cs_loop = np.asarray(cmat(jnp.asarray(qs[:nl])))  # the SciPy loop's C, for free
    ref = ScipyQR(model)
    check_equilibrate(model, ref, Cs_loop[:50])
    out = {"model": "mobile_robot", "nc": model.nc, "nv": model.nv, "configs": args.configs,
           "loop_configs": nl, "compile": {}}

    # Compile (first call on one chunk of 2048, minus the warm call), then correctness.
    for method in METHODS:
        t_first, t_warm = first_call(sweep_fn(model, qs[:2048], method, None))
        out["compile"][method] = {"first_s": t_first, "warm_s": t_warm,
                                  "compile_s": t_first - t_warm}
        progress(f"robot: {method} first call {t_first:.2f} s (warm {t_warm:.2f} s)")
    sw = jmbs.solvability_sweep(model, qs[:nl], method="qr", progress=False)
    loop_out = ref.loop(Cs_loop)
    check_same(loop_out, sw.rank, sw.unique, sw.component_unique, "mobile robot")
    check_same(ref.batch(Cs_loop), sw.rank, sw.unique, sw.component_unique, "mobile robot (batched)")
    out["ranks"] = np.bincount(sw.rank).tolist()
    out["unique_elements"] = [n for n, u in zip(model.element_names, sw.unique.all(0)) if u]

    # Main comparison: the sweeps over all configurations and the SciPy loop take turns.
    fns = {f"jmbs {m}": sweep_fn(model, qs, m, None) for m in METHODS}
    fns["SciPy loop"] = lambda: ref.loop(Cs_loop)
    fns["SciPy batched"] = lambda: ref.batch(Cs_loop)
    counts = {**dict.fromkeys(fns, args.configs), "SciPy loop": nl, "SciPy batched": nl}
    t0 = cpu_ticks()
    out["main"] = rounds(fns, counts, args.rounds)
    out["main_others_busy"] = others_busy(t0, cpu_ticks())
    progress("robot: main comparison done")

    # SciPy split: equilibrate, QR + null space, criteria (separate loops).
    Xs = [ref.equilibrate(C) for C in Cs_loop]
    Ns = [ref.nullspace(X)[1] for X in Xs]
    split = {"equilibrate": lambda: [ref.equilibrate(C) for C in Cs_loop],
             "pivoted QR": lambda: [ref.nullspace(X) for X in Xs],
             "criteria": lambda: [ref.criteria(X, N) for X, N in zip(Xs, Ns)]}
    out["scipy_split"] = rounds(split, dict.fromkeys(split, nl), args.rounds)

    # Breakdown of jmbs (qr) at several batch sizes.
    nb = args.breakdown_configs
    out["breakdown"] = {}
    for bs in args.batches:
        qb = qs[:max(nb, bs)]
        Qd = jnp.asarray(qs[:bs])
        Cd = jax.block_until_ready(cmat(Qd))
        Nd = null_bases(model, Cd)
        parts = decision_parts(model)
        compile_s = {"sweep": first_call(sweep_fn(model, qb[:bs], "qr", bs))[0],
                     "C": first_call(lambda: cmat(Qd))[0]}
        compile_s.update({k: first_call(lambda f=f: f(Cd, Nd, sets))[0]
                          for k, f in parts.items()})
        fns = {"sweep": sweep_fn(model, qb, "qr", bs), "C": lambda: cmat(Qd)}
        fns.update({k: (lambda f=f: f(Cd, Nd, sets)) for k, f in parts.items()})
        counts = {**dict.fromkeys(fns, bs), "sweep": len(qb)}
        t0 = cpu_ticks()
        res = rounds(fns, counts, args.rounds)
        res["others_busy"] = others_busy(t0, cpu_ticks())
        res["first_call_s"] = compile_s
        res["sweep_configs"] = len(qb)
        out["breakdown"][bs] = res
        progress(f"robot: breakdown at batch {bs} done")
    return out


# --------------------------------------------------------------------------------------
# 2. N-four-bar
# --------------------------------------------------------------------------------------


def bench_four_bar(args) -> dict:
    n = args.four_bar_n
    model = jmbs.examples.n_four_bar(n)
    sets = jmbs.element_sets(model)
    rng = np.random.default_rng(1)
    k = args.fb_configs
    qs = jmbs.examples.n_four_bar_configuration(n, rng.uniform(0.2, 1.3, k))
    res = max(float(np.max(np.abs(np.asarray(jmbs.phi(model, q))))) for q in qs[:3])
    if res > 1e-12:
        raise AssertionError(f"four-bar configurations violate the constraints by {res:.3g}")
    cfun = jax.jit(lambda q: jmbs.constraint_matrix(model, q))
    Cs = np.stack([np.asarray(cfun(q)) for q in qs])  # the SciPy loop's C, for free
    ref = ScipyQR(model)
    check_equilibrate(model, ref, Cs[:2])
    out = {"model": f"n_four_bar({n})", "nc": model.nc, "nv": model.nv, "configs": k,
           "batch": args.fb_batch}

    single_first, _ = first_call(lambda: jmbs.solvability(model, qs[0], method="qr").rank)
    sweep_first, _ = first_call(sweep_fn(model, qs[:args.fb_batch], "qr", args.fb_batch))
    dca_first, _ = first_call(sweep_fn(model, qs[:args.fb_batch], "dca", args.fb_batch))
    out["first_call_s"] = {"single": single_first, "sweep": sweep_first, "sweep_dca": dca_first}
    progress(f"four-bar: first calls {single_first:.1f} s (single), {sweep_first:.1f} s (sweep), "
             f"{dca_first:.1f} s (sweep, dca)")

    reports = [jmbs.solvability(model, q, method="qr") for q in qs]
    sw = jmbs.solvability_sweep(model, qs, method="qr", batch_size=args.fb_batch, progress=False)
    loop_out = ref.loop(Cs)
    check_same(loop_out, [r.rank for r in reports], [np.asarray(r.decisions.unique) for r in reports],
               [np.asarray(r.decisions.component_unique) for r in reports], "four-bar single")
    check_same(loop_out, sw.rank, sw.unique, sw.component_unique, "four-bar sweep")
    sw_dca = jmbs.solvability_sweep(model, qs, method="dca", batch_size=args.fb_batch, progress=False)
    check_same(loop_out, sw_dca.rank, sw_dca.unique, sw_dca.component_unique, "four-bar sweep (dca)")
    check_same(ref.batch(Cs), sw.rank, sw.unique, sw.component_unique, "four-bar (SciPy batched)")
    out["ranks"] = np.bincount(sw.rank).tolist()

    ns = min(k, args.fb_singles)
    fns = {"jmbs single": lambda: [jmbs.solvability(model, q, method="qr").rank for q in qs[:ns]],
           "jmbs sweep": sweep_fn(model, qs, "qr", args.fb_batch),
           "jmbs sweep (dca)": sweep_fn(model, qs, "dca", args.fb_batch),
           "SciPy loop": lambda: ref.loop(Cs), "SciPy batched": lambda: ref.batch(Cs)}
    counts = {"jmbs single": ns, "jmbs sweep": k, "jmbs sweep (dca)": k, "SciPy loop": k,
              "SciPy batched": k}
    # Parts of one configuration (each called `reps` times a round): jmbs (jitted, not
    # vmapped) and SciPy.
    reps = args.fb_reps
    C0 = jnp.asarray(Cs[0])
    N0j = null_bases(model, C0)
    q0 = jnp.asarray(qs[0])
    jax.block_until_ready(cfun(q0))
    fns["jmbs C"] = lambda: [cfun(q0) for _ in range(reps)]
    for name, f in decision_parts(model, single=True).items():
        jax.block_until_ready(f(C0, N0j, sets))
        fns[f"jmbs {name}"] = lambda f=f: [f(C0, N0j, sets) for _ in range(reps)]
    X0 = ref.equilibrate(Cs[0])
    N0 = ref.nullspace(X0)[1]
    fns.update({"SciPy equilibrate": lambda: [ref.equilibrate(Cs[0]) for _ in range(reps)],
                "SciPy pivoted QR": lambda: [ref.nullspace(X0) for _ in range(reps)],
                "SciPy criteria": lambda: [ref.criteria(X0, N0) for _ in range(reps)]})
    counts.update({name: reps for name in fns if name not in counts})
    t0 = cpu_ticks()
    out["times"] = rounds(fns, counts, args.rounds)
    out["others_busy"] = others_busy(t0, cpu_ticks())
    progress("four-bar done")
    return out


# --------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------


def fmt(x: dict) -> str:
    return f"{x['median_us']:.1f} [{x['min_us']:.1f}]"


def print_robot(r: dict) -> None:
    main = r["main"]
    # The stronger SciPy baseline of this run: batched or the loop, whichever was faster.
    scipy_us = min(main["SciPy batched"]["median_us"], main["SciPy loop"]["median_us"])
    print(f"\n1. mobile robot, C {r['nc']} x {r['nv']}: {r['configs']} configurations (SciPy loop: "
          f"{r['loop_configs']}, C given); rank counts "
          f"{ {k: c for k, c in enumerate(r['ranks']) if c} }; others {100 * r['main_others_busy']:.0f}%")
    print("   per configuration, µs: median of rounds [min]; SciPy/jmbs = the faster SciPy "
          "baseline over jmbs (> 1: jmbs faster)")
    head = f"   {'variant':<16} {'µs/config':>18} {'configs/s':>11} {'SciPy/jmbs':>10} {'compile s':>9}"
    print(head)
    print("   " + "-" * (len(head) - 3))
    for name, x in main.items():
        comp = r["compile"].get(name.removeprefix("jmbs "), {}).get("compile_s")
        print(f"   {name:<16} {fmt(x):>18} {1e6 / x['median_us']:>11.0f} "
              f"{scipy_us / x['median_us']:>10.2f} {'' if comp is None else f'{comp:.2f}':>9}")
    sp = r["scipy_split"]
    print("   SciPy loop split, µs/config: " + ", ".join(f"{k} {v['median_us']:.1f}"
                                                      for k, v in sp.items()))
    print("\n   jmbs (qr) breakdown, µs/config (median [min]); first call s in brackets below")
    names = ["sweep", "C", "decide", "equilibrate", "pivoted QR", "criteria"]
    head = f"   {'batch':>6} " + " ".join(f"{n:>16}" for n in names) + f" {'others':>6}"
    print(head)
    print("   " + "-" * (len(head) - 3))
    for bs, b in r["breakdown"].items():
        print(f"   {bs:>6} " + " ".join(f"{fmt(b[n]):>16}" for n in names)
              + f" {100 * b['others_busy']:>5.0f}%")
        print(f"   {'':>6} " + " ".join(f"{'(' + format(b['first_call_s'][n], '.2f') + ' s)':>16}"
                                     for n in names))


def print_four_bar(r: dict) -> None:
    t = r["times"]
    scipy_us = min(t["SciPy batched"]["median_us"], t["SciPy loop"]["median_us"])  # the faster
    print(f"\n2. {r['model']}, C {r['nc']} x {r['nv']}: {r['configs']} configurations, sweep batch "
          f"{r['batch']}; others {100 * r['others_busy']:.0f}%; first calls "
          + ", ".join(f"{v:.1f} s ({k})" for k, v in r["first_call_s"].items()))
    print(f"   {'variant':<22} {'ms/config':>20} {'SciPy/jmbs':>10}")
    for name, x in t.items():
        ratio = f"{scipy_us / x['median_us']:.3f}" if name.startswith("jmbs ") and name in (
            "jmbs single", "jmbs sweep", "jmbs sweep (dca)") else ""
        print(f"   {name:<22} {x['median_us'] / 1e3:>11.3f} [{x['min_us'] / 1e3:.3f}] {ratio:>10}")


def source_hash() -> str:
    """Short hash of jmbs's sources, to tell runs on a changing working tree apart."""
    h = hashlib.sha256()
    root = os.path.dirname(jmbs.__file__)
    for dirpath, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if f.endswith(".py"):
                with open(os.path.join(dirpath, f), "rb") as fh:
                    h.update(f.encode() + fh.read())
    return h.hexdigest()[:10]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="fewer configurations, one batch size, 2 four-bar configurations "
                        "(about a minute on an idle machine, mostly compiling)")
    p.add_argument("--pin", action="store_true", help="pin the process to CPU 0")
    p.add_argument("--configs", type=int, default=None,
                   help="mobile-robot batch (default 100000; quick 2048)")
    p.add_argument("--loop-configs", type=int, default=None,
                   help="configurations of the SciPy loop (default 2000; quick 400)")
    p.add_argument("--breakdown-configs", type=int, default=None,
                   help="configurations of the breakdown's sweeps (default 16384; quick 2048)")
    p.add_argument("--batches", type=int, nargs="+", default=None,
                   help="breakdown batch sizes (default 512 2048 8192; quick 2048)")
    p.add_argument("--rounds", type=int, default=None, help="rounds (default 3; quick 3)")
    p.add_argument("--four-bar-n", type=int, default=40, help="N of the N-four-bar (default 40)")
    p.add_argument("--fb-configs", type=int, default=None,
                   help="four-bar configurations (default 16; quick 2)")
    p.add_argument("--fb-batch", type=int, default=None,
                   help="four-bar sweep batch size (default 16; quick 2)")
    p.add_argument("--fb-singles", type=int, default=None,
                   help="single solvability calls per round (default 4; quick 1)")
    p.add_argument("--fb-reps", type=int, default=None,
                   help="calls per round of each four-bar part (default 3; quick 1)")
    p.add_argument("--skip", choices=("robot", "four-bar"), nargs="*", default=[],
                   help="sections to leave out")
    p.add_argument("--blas-threads", default=None, metavar="N",
                   help="set OPENBLAS_NUM_THREADS=N (read before NumPy is imported)")
    p.add_argument("--json", default=None, help="also write the results to this file")
    p.add_argument("--wait-idle", type=float, default=0.0, metavar="S",
                   help="first wait up to S seconds for the other processes to leave the "
                        "CPUs idle (< 5%% busy for 5 s)")
    args = p.parse_args()
    q = args.quick
    args.configs = args.configs or (2048 if q else 100_000)
    args.loop_configs = args.loop_configs or (400 if q else 2000)
    args.breakdown_configs = args.breakdown_configs or (2048 if q else 16384)
    args.batches = args.batches or ([2048] if q else list(BATCHES))
    args.rounds = args.rounds or 3
    args.fb_configs = args.fb_configs or (2 if q else 16)
    args.fb_batch = args.fb_batch or (2 if q else 16)
    args.fb_singles = args.fb_singles or (1 if q else 4)
    args.fb_reps = args.fb_reps or (1 if q else 3)
    if args.pin:
        pin_to_cpu0()
    if args.wait_idle:
        wait_idle(args.wait_idle)

    cpus = sorted(os.sched_getaffinity(0))
    info = {"jax": jax.__version__, "numpy": np.__version__, "scipy": scipy.__version__,
            "python": platform.python_version(), "cpu_count": os.cpu_count(), "affinity": cpus,
            "pinned": args.pin, "processor": platform.processor() or platform.machine(),
            "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
            "rounds": args.rounds, "git": git_state(), "jmbs_file": jmbs.__file__,
            "jmbs_sources": source_hash(),
            "argv": sys.argv[1:], "busy_others_start": cpu_busy()}
    print(f"jax {info['jax']}, numpy {info['numpy']}, scipy {info['scipy']}, "
          f"{jax.devices()[0].platform} device, {info['cpu_count']} CPUs, affinity {cpus}"
          f"{' (pinned)' if args.pin else ''}, OPENBLAS_NUM_THREADS {info['openblas_threads']}; "
          f"{args.rounds} rounds; jmbs from {os.path.dirname(info['jmbs_file'])}, "
          f"repository at {info['git']}, jmbs sources {info['jmbs_sources']}")
    if info["busy_others_start"] > 0.1:
        print(f"warning: other processes kept {100 * info['busy_others_start']:.0f}% of the "
              "CPUs busy at start; the timings will be slower and noisier")
    results = {}
    if "robot" not in args.skip:
        results["robot"] = bench_robot(args)
    if "four-bar" not in args.skip:
        results["four_bar"] = bench_four_bar(args)
    if "robot" in results:
        print_robot(results["robot"])
    if "four_bar" in results:
        print_four_bar(results["four_bar"])
    info["busy_others_end"] = cpu_busy()
    print(f"\nCPUs busy with other processes: {100 * info['busy_others_start']:.0f}% at start, "
          f"{100 * info['busy_others_end']:.0f}% at end")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"info": info, "results": results}, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
