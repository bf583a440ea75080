"""Dynamics benchmark: the IFToMM A04 Bricard mechanism over 10 s, jmbs against Exudyn.

    .venv/bin/python benchmarks/bench_dynamics.py [--quick] [--json PATH] [--reps N]
                                                  [--t1 T] [--variants all|base]
                                                  [--batch-sizes 16,64] [--exudyn-batch-runs K]
                                                  [--blas-threads N]

Both codes simulate `jmbs.examples.bricard()` (five 1 m, 1 kg rods of square section
0.1 m, six revolute joints, one redundant constraint, gravity -y, released from rest).
The tracked point is the joint point J3, which starts at (1, -1, 0); its x reaches -1
at t ~ 2.5 s and +1 at t ~ 5 s. Both save it on the same grid of 101 times.

1. **Reference:** external to both codes, `bricard_reference.py`: the five joint angles
   of the open chain with the sixth joint as a closure, Lagrange's equations from the
   energies, SciPy's DOP853 at rtol = atol = 1e-13 (checked against 1e-12). jmbs's own
   Dopri8 run at 1e-12 is reported against it, not used for scoring.
2. **Exudyn** (the default compiled module): rigid bodies with Euler parameters
   (`mbs.CreateRigidBody`), six `CreateRevoluteJoint`s, implicit generalized-alpha
   (index 3, spectral radius 1.0, 0.9, 0.8 and 0.6) and its index-2 trapezoidal rule
   (`EXUDYN_VARIANTS`: the fastest setting at the accuracy is Exudyn's figure;
   modified Newton, relative tolerance 1e-8), dense
   solver (`EigenDense`) with `ignoreSingularJacobian = True` (full-pivot LU), which is
   what Exudyn's own `TestModels/bricardMechanism.py` uses for the redundant constraint.
   The tracked point is the node of the third body (its reference point is J3). The
   number of steps is taken from a ladder; the smallest with a max error <= 1e-6 against
   the reference is timed. The time is `mbs.SolveDynamic` alone (building the model and
   `Assemble` are timed apart).
3. **jmbs:** `jmbs.simulate(m, 10.0, formulation=..., stabilization=..., solver=...,
   saveat=ts, stepsize_controller=PIDController(rtol=tol, atol=tol), reactions=False)`,
   with `tol` passed as a JAX array so that one compiled program serves the whole
   ladder of tolerances (a Python float is a static argument: every new value would
   compile again). The loosest tolerance with a max error <= 1e-6 is timed (median of
   `--reps` runs after the compiling call). Compile time = first call - second call.
   The variants (formulation / solver / stabilization) are each searched the same way.
   **One-off** (what a user running once pays, fresh process): jmbs import + build +
   first call (compile and run) against Exudyn import + build + Assemble + solve.
4. **Extras** on the base variant at its matched tolerance: `reactions=True` with 101
   saved times, `reactions=False` with 1001 saved times, and a breakdown (jitted
   vector field, projection, per-saved-time post-processing).
5. **Batch:** `jax.jit(jax.vmap(lambda p: jmbs.simulate(m.with_params(p), ...).q[-1]))`
   over rod masses x (1 +- 5 %) (uniform, all five rods), the formulation prepared on the
   nominal model; against sequential Exudyn runs with the same masses at the matched
   steps (`--exudyn-batch-runs` runs, extrapolated to the batch size). One perturbed
   parameter set is compared between the two codes.
"""

import os
import sys

from _blas import early_blas_threads  # noqa: E402  (the scripts run from benchmarks/)

early_blas_threads()

import argparse  # noqa: E402
import faulthandler  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

_t = time.perf_counter()
import diffrax  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import jmbs  # noqa: E402

IMPORT_S = {"jmbs": time.perf_counter() - _t}  # with JAX and diffrax, which it loads
_t = time.perf_counter()
try:
    import exudyn as exu  # noqa: E402
    from exudyn.itemInterface import ObjectGround, SensorNode  # noqa: E402
    from exudyn.rigidBodyUtilities import RigidBodyInertia  # noqa: E402
except ImportError:  # pragma: no cover
    exu = None
IMPORT_S["exudyn"] = time.perf_counter() - _t
from bricard_reference import reference as external_reference  # noqa: E402

TRACK_BODY, TRACK_LOCAL = "rod2", (0.5, 0.0, 0.0)  # J3: the far end of rod 2, starts at (1, -1, 0)
ACCURACY = 1e-6
EXUDYN_LADDER = (2000, 5000, 10000, 20000, 25000, 30000, 40000, 80000, 160000)
# Exudyn's settings, each walked up the step ladder (the fastest at the accuracy counts),
# label -> (solver, spectral radius): index 3 generalized-alpha needs a
# spectral radius below 1 (its docs: "usually 0.5 .. 1"; 1.0 is the undamped setting),
# and index 2 (velocity-level constraints) exists only as its trapezoidal rule (Newmark
# with beta 1/4, gamma 1/2, `TrapezoidalIndex2`).
EXUDYN_VARIANTS = {f"gen.-alpha index 3, rho {rho}": ("GeneralizedAlpha", rho)
                   for rho in (1.0, 0.9, 0.8, 0.6)} | {"trapezoidal index 2": ("TrapezoidalIndex2", 1.0)}
JMBS_LADDER = (1e-5, 3e-6, 1e-6, 3e-7, 1e-7, 3e-8, 1e-8, 3e-9, 1e-9, 3e-10, 1e-10)


def log(*a):
    print(*a, flush=True)


STATE = {"res": None, "json": None}  # what a watchdog writes out before ending a hung run


class Watchdog:
    """Ends the process if one call makes no progress for `seconds` (jaxlib's batched LAPACK
    kernels can deadlock XLA's CPU thread pool on a 2-CPU machine: see docs/benchmarks.md),
    after printing every thread's stack and writing the results measured so far."""

    def __init__(self, what, seconds=600.0):
        self.what, self.seconds = what, seconds

    def _fire(self):
        log(f"\n!!! {self.what}: no result after {self.seconds:.0f} s; a hang (deadlock) is suspected. "
            "Python stacks:")
        faulthandler.dump_traceback(all_threads=True)
        if STATE["res"] is not None:
            STATE["res"]["hang"] = self.what
            summary(STATE["res"])
            save(STATE["res"], STATE["json"])
        os._exit(3)

    def __enter__(self):
        self.timer = threading.Timer(self.seconds, self._fire)
        self.timer.daemon = True
        self.timer.start()
        return self

    def __exit__(self, *exc):
        self.timer.cancel()


def save(res, path):
    if path:
        with open(path, "w") as fh:
            json.dump(res, fh, indent=1, default=float)
        log(f"wrote {path}")


def median(xs):
    return statistics.median(xs)


# ---------------------------------------------------------------------------------------------
# jmbs
# ---------------------------------------------------------------------------------------------
def tracked_x(model, qs):
    return np.asarray(jax.vmap(lambda q: model.point(q, TRACK_BODY, jnp.asarray(TRACK_LOCAL)))(qs))[:, 0]


def jmbs_run(model, t1, ts, formulation, stabilization, solver, tol, reactions=False, watchdog_s=600.0):
    """One simulate call, waited for; returns (wall s, solution)."""
    tol = jnp.asarray(tol, dtype=float)
    with Watchdog(f"jmbs.simulate(reactions={reactions}, {len(ts)} saves)", watchdog_s):
        t = time.perf_counter()
        sol = jmbs.simulate(model, t1, formulation=formulation, stabilization=stabilization, solver=solver,
                            saveat=ts, stepsize_controller=diffrax.PIDController(rtol=tol, atol=tol),
                            reactions=reactions, max_steps=1_000_000)
        jax.block_until_ready(sol)
        return time.perf_counter() - t, sol


VARIANTS = {
    "NullSpace / Tsit5 / Projection": (jmbs.NullSpaceProjection, diffrax.Tsit5, "projection"),
    "NullSpace / Dopri5 / Projection": (jmbs.NullSpaceProjection, diffrax.Dopri5, "projection"),
    "NullSpace / Dopri8 / Projection": (jmbs.NullSpaceProjection, diffrax.Dopri8, "projection"),
    "Pseudoinverse / Tsit5 / Projection": (jmbs.Pseudoinverse, diffrax.Tsit5, "projection"),
    "AugLagrangian / Tsit5 / Projection": (jmbs.AugmentedLagrangian, diffrax.Tsit5, "projection"),
    "NullSpace / Tsit5 / Baumgarte(5,5)": (jmbs.NullSpaceProjection, diffrax.Tsit5, "baumgarte"),
    "Pseudoinverse / Dopri8 / Projection": (jmbs.Pseudoinverse, diffrax.Dopri8, "projection"),
}
BASE = "NullSpace / Tsit5 / Projection"


def make_stab(kind):
    return jmbs.Projection() if kind == "projection" else jmbs.Baumgarte(5.0, 5.0)


def jmbs_matched(model, t1, ts, x_ref, name, reps, ladder):
    """Compile, walk the tolerance ladder, time the loosest tolerance meeting ACCURACY."""
    form_cls, solver_cls, stab = VARIANTS[name]
    form, solver, stab = form_cls(), solver_cls(), make_stab(stab)
    first, _ = jmbs_run(model, t1, ts, form, stab, solver, ladder[0])
    second, _ = jmbs_run(model, t1, ts, form, stab, solver, ladder[0])
    rows, chosen = [], None
    for tol in ladder:
        try:
            w, sol = jmbs_run(model, t1, ts, form, stab, solver, tol)
        except Exception as e:  # a failed run (max_steps, projection) at a loose tolerance
            log(f"    tol {tol:.0e}: failed ({type(e).__name__}: {str(e)[:120]})")
            continue
        err = float(np.max(np.abs(tracked_x(model, sol.q) - x_ref)))
        steps = int(sol.stats["num_steps"])
        rows.append({"tol": tol, "err": err, "steps": steps, "wall_once": w})
        log(f"    tol {tol:.0e}: steps {steps:5d}  max err {err:.2e}  {w:.3f} s")
        if err <= ACCURACY:
            chosen = tol
            break
    out = {"variant": name, "first_call_s": first, "second_call_s": second,
           "compile_s": first - second, "ladder": rows}
    if chosen is None:
        log(f"    no tolerance in the ladder reaches {ACCURACY:g}")
        return out
    walls = []
    for _ in range(reps):
        w, sol = jmbs_run(model, t1, ts, form, stab, solver, chosen)
        walls.append(w)
    out.update(tol=chosen, steps=int(sol.stats["num_steps"]),
               rejected=int(sol.stats.get("num_rejected_steps", 0)),
               err=float(np.max(np.abs(tracked_x(model, sol.q) - x_ref))),
               wall_s=median(walls), wall_min_s=min(walls), walls=walls)
    log(f"    -> tol {chosen:.0e}: {out['steps']} steps, err {out['err']:.2e}, "
        f"median {out['wall_s']:.3f} s [min {out['wall_min_s']:.3f}] of {reps}")
    return out


def timeit(fn, *args, n=30, rounds=5):
    """Median over `rounds` of the mean time of `n` calls."""
    jax.block_until_ready(fn(*args))
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            r = fn(*args)
        jax.block_until_ready(r)
        out.append((time.perf_counter() - t) / n)
    return median(out)


def jmbs_breakdown(model, formulation, q, v, n):
    """Per-call cost (s) of the pieces of a run: vector field, projection, post-processing."""
    f = formulation.prepare(model, q, 0.0)
    # The vector field of a run without stabilization, and the post-processing of a saved
    # state without and with the reactions, from their public pieces.
    vf = jax.jit(lambda q, v: (jmbs.qdot(model, q, v), f.solve(jmbs.dynamics_terms(model, q, v, 0.0))[0]))
    terms = jax.jit(lambda q, v: jmbs.dynamics_terms(model, q, v, 0.0))
    solve = jax.jit(lambda q, v: f.solve(jmbs.dynamics_terms(model, q, v, 0.0)))
    proj = jax.jit(lambda q, v: jmbs.Projection().project(model, q, v, 0.0))
    post = jax.jit(lambda q, v: (f.solve(jmbs.dynamics_terms(model, q, v, 0.0)), jmbs.energy(model, q, v)))
    post_r = jax.jit(lambda q, v: jmbs.reactions(model, q, v, 0.0, formulation=f))
    C = jmbs.constraint_matrix(model, q, 0.0)
    svd = jax.jit(lambda C: jnp.linalg.svd(C, full_matrices=True))
    return {"vector_field": timeit(vf, q, v, n=n), "dynamics_terms": timeit(terms, q, v, n=n),
            "formulation_solve": timeit(solve, q, v, n=n), "projection": timeit(proj, q, v, n=n),
            "post_per_save": timeit(post, q, v, n=n), "post_per_save_reactions": timeit(post_r, q, v, n=n),
            "svd_30x30": timeit(svd, C, n=n)}


# ---------------------------------------------------------------------------------------------
# Exudyn
# ---------------------------------------------------------------------------------------------
def exudyn_build(model, masses=None):
    """The Bricard in Exudyn, from jmbs's parameters: returns (system container, mbs, sensor)."""
    p = model.params()
    points = [np.asarray(p[f"J{k + 1}.point"]) for k in range(6)]
    axes = [np.asarray(p[f"J{k + 1}.axis"]) for k in range(6)]
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    bodies, nodes = [ground], []
    for k in range(5):
        name = f"rod{k + 1}"
        R = np.asarray(p[f"{name}.rotation"])  # columns: body axes in the world, x along the rod
        mass = float(p[f"{name}.mass"]) if masses is None else float(masses[k])
        inertia = RigidBodyInertia(mass=mass, inertiaTensor=np.diag(np.asarray(p[f"{name}.inertia"])),
                                   com=[0.5, 0.0, 0.0], inertiaTensorAtCOM=True)
        # the node (reference point) at the rod's start joint, the centre 0.5 m along local x
        assert np.allclose(points[k] + R @ [0.5, 0, 0], np.asarray(p[f"{name}.position"]))
        b = mbs.CreateRigidBody(inertia=inertia, referencePosition=points[k], referenceRotationMatrix=R,
                                gravity=list(np.asarray(p["gravity"])), returnDict=True)
        bodies.append(b["bodyNumber"])
        nodes.append(b["nodeNumber"])
    bodies.append(ground)
    for k in range(6):
        mbs.CreateRevoluteJoint(itemNumbers=[bodies[k], bodies[k + 1]], position=points[k], axis=axes[k])
    sensor = mbs.AddSensor(SensorNode(nodeNumber=nodes[2], storeInternal=True, writeToFile=False,
                                      outputVariableType=exu.OutputVariableType.Position))
    mbs.Assemble()
    return SC, mbs, sensor


def exudyn_run(model, t1, steps, period, masses=None, variant=("GeneralizedAlpha", 0.9)):
    """Build, then time SolveDynamic alone; returns (solve s, build s, ts, x, ok)."""
    t = time.perf_counter()
    SC, mbs, sensor = exudyn_build(model, masses)  # SC owns mbs: keep it alive
    build = time.perf_counter() - t
    ss = exu.SimulationSettings()
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = period
    ti = ss.timeIntegration
    ti.numberOfSteps = int(steps)
    ti.endTime = float(t1)
    ti.verboseMode = 0
    solver, rho = variant
    ti.generalizedAlpha.spectralRadius = rho
    ti.generalizedAlpha.computeInitialAccelerations = True
    ti.newton.useModifiedNewton = True
    ti.newton.relativeTolerance = 1e-8
    ss.linearSolver.solverType = exu.LinearSolverType.EigenDense
    ss.linearSolver.ignoreSingularJacobian = True  # full-pivot LU: the redundant constraint
    t = time.perf_counter()
    ok = mbs.SolveDynamic(ss, solverType=getattr(exu.DynamicSolverType, solver))
    solve = time.perf_counter() - t
    data = mbs.GetSensorStoredData(sensor)
    return solve, build, data[:, 0], data[:, 1], bool(ok)


def exudyn_matched(model, t1, ts, x_ref, reps, ladder, label):
    period = float(ts[1] - ts[0])
    rows, chosen = [], None
    for n in ladder:
        n = int(round(n * t1 / 10.0))  # the ladder is for 10 s
        if abs(period * n / t1 - round(period * n / t1)) > 1e-9:
            continue  # the saved times must fall on steps
        try:
            solve, build, te, xe, ok = exudyn_run(model, t1, n, period, variant=EXUDYN_VARIANTS[label])
        except exu.SolverError as e:  # Newton did not converge at some step
            log(f"    steps {n:6d}: failed ({e})")
            rows.append({"steps": n, "ok": False, "error": str(e)})
            continue
        good = ok and te.shape == ts.shape and np.allclose(te, ts, atol=1e-9)
        err = float(np.max(np.abs(xe - x_ref))) if good else float("nan")
        rows.append({"steps": n, "err": err, "wall_once": solve, "ok": ok})
        log(f"    steps {n:6d}: max err {err:.2e}  {solve:.3f} s (build {build * 1e3:.0f} ms)  ok={ok}")
        if good and err <= ACCURACY:
            chosen = n
            break
    out = {"variant": label, "ladder": rows}
    if chosen is None:
        log(f"    no step count in the ladder reaches {ACCURACY:g}")
        return out
    walls, builds = [], []
    for _ in range(reps):
        solve, build, te, xe, ok = exudyn_run(model, t1, chosen, period, variant=EXUDYN_VARIANTS[label])
        walls.append(solve)
        builds.append(build)
    out.update(steps=chosen, err=float(np.max(np.abs(xe - x_ref))), wall_s=median(walls),
               wall_min_s=min(walls), walls=walls, build_s=median(builds))
    log(f"    -> {chosen} steps: err {out['err']:.2e}, median {out['wall_s']:.3f} s "
        f"[min {out['wall_min_s']:.3f}] of {reps}; build + Assemble {out['build_s'] * 1e3:.0f} ms")
    return out


def summary(res):
    """The closing table, from the results gathered so far."""
    t1, reps = res["t1"], res["reps"]
    ex, extras, batch = res.get("exudyn", {}), res.get("jmbs_extras", {}), res.get("batch", {})
    log("\n" + "=" * 100)
    log(f"Bricard A04, t1 = {t1} s, max error of x(J3) <= {ACCURACY:g} against the reference, "
        f"medians of {reps} runs")
    log(f"{'code / variant':40s} {'setting':>10s} {'steps':>7s} {'max err':>9s} {'wall s':>8s} "
        f"{'Exudyn/this':>11s} {'compile s':>9s}")
    for e in res.get("exudyn_variants", {}).values():
        if "steps" in e:
            log(f"{'Exudyn ' + e['variant']:40s} {e['steps']:>10d} "
                f"{e['steps']:>7d} {e['err']:>9.1e} {e['wall_s']:>8.3f} {ex['wall_s'] / e['wall_s']:>11.2f} "
                f"{'-':>9s}")
    for name, r in res.get("jmbs", {}).items():
        if "tol" not in r:
            log(f"{'jmbs ' + name:40s} {'none':>10s}")
            continue
        ratio = ex["wall_s"] / r["wall_s"] if "wall_s" in ex else float("nan")
        r["speedup_vs_exudyn"] = ratio
        log(f"{'jmbs ' + name:40s} {r['tol']:>10.0e} {r['steps']:>7d} {r['err']:>9.1e} {r['wall_s']:>8.3f} "
            f"{ratio:>11.2f} {r['compile_s']:>9.1f}")
    for label, e in extras.items():
        if "wall_s" in e:
            log(f"{'jmbs base, ' + label:40s} {'':>10s} {'':>7s} {'':>9s} {e['wall_s']:>8.3f}")
    if batch.get("exudyn_per_run_s"):
        ex1 = batch["exudyn_per_run_s"]
        for B, b in batch["sizes"].items():
            if "per_sim_s" in b:
                b["throughput_ratio"] = ex1 / b["per_sim_s"]
                log(f"{f'jmbs batch {B} (per simulation)':40s} {'':>10s} {'':>7s} {'':>9s} "
                    f"{b['per_sim_s']:>8.3f} "
                    f"{b['throughput_ratio']:>11.2f} {b['first_call_s'] - b['wall_s']:>9.1f}")
        log(f"{'Exudyn sequential (per run)':40s} {'':>10s} {ex['steps']:>7d} {'':>9s} {ex1:>8.3f} "
            f"{1.0:>11.2f}")
    if "compile_fresh" in res:
        log(f"jmbs compile time (fresh process, base variant): {res['compile_fresh']['compile_s']:.1f} s; "
            "later variants' compile column counts only what they do not share with earlier runs")
    base = res.get("jmbs", {}).get(BASE, {})
    if "wall_s" in ex and "wall_s" in base and "compile_fresh" in res:
        once_j = res["import_s"]["jmbs"] + res["jmbs_build_s"] + res["compile_fresh"]["first_call_s"]
        once_e = res["import_s"]["exudyn"] + ex["build_s"] + ex["wall_s"]
        res["headline"] = {"repeat_ratio": ex["wall_s"] / base["wall_s"], "one_off_ratio": once_e / once_j,
                           "one_off_jmbs_s": once_j, "one_off_exudyn_s": once_e}
        log(f"Exudyn (fastest, {ex['variant']}) / jmbs default: repeat call "
            f"{ex['wall_s'] / base['wall_s']:.2f}x; one-off {once_e / once_j:.2f}x (jmbs import + build + "
            f"first call {once_j:.1f} s, Exudyn import + build + solve {once_e:.2f} s); > 1: jmbs faster")
    log("Targets: jmbs wall <= Exudyn's (Exudyn/this >= 1); compile < 10 s; batch throughput >= 5x.")


# ---------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="t1 = 3 s, 1 repetition, base variant, batch 4")
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--reps", type=int, default=None, help="timed repetitions (default 5; quick 1)")
    ap.add_argument("--t1", type=float, default=None, help="end time (default 10; quick 3)")
    ap.add_argument("--variants", default=None, help="'all' (default) or 'base' (quick)")
    ap.add_argument("--batch-sizes", default=None, help="jmbs batch sizes, comma separated (default 16,64)")
    ap.add_argument("--batch-reps", type=int, default=None, help="timed repetitions per batch (default 3)")
    ap.add_argument("--exudyn-batch-runs", type=int, default=None,
                    help="sequential Exudyn runs with perturbed masses (default 4; quick 1)")
    ap.add_argument("--no-reactions", action="store_true",
                    help="skip the reactions=True timing (it can hang: see docs/benchmarks.md)")
    ap.add_argument("--blas-threads", default=None, help="OPENBLAS_NUM_THREADS (set before import)")
    a = ap.parse_args()
    if exu is None:
        sys.exit("exudyn is not installed: .venv/bin/pip install -e '.[benchmarks]'")
    quick = a.quick
    t1 = a.t1 if a.t1 is not None else (3.0 if quick else 10.0)
    reps = a.reps if a.reps is not None else (1 if quick else 5)
    variants = a.variants or ("base" if quick else "all")
    batch_sizes = [int(s) for s in (a.batch_sizes or ("4" if quick else "16,64")).split(",") if s]
    batch_reps = a.batch_reps if a.batch_reps is not None else (1 if quick else 3)
    ex_batch_runs = a.exudyn_batch_runs if a.exudyn_batch_runs is not None else (1 if quick else 4)
    names = [BASE] if variants == "base" else list(VARIANTS)

    res = {"machine": {"python": platform.python_version(), "jax": jax.__version__,
                       "numpy": np.__version__, "exudyn": exu.__version__, "cpus": os.cpu_count(),
                       "processor": platform.processor(),
                       "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
                       "xla_flags": os.environ.get("XLA_FLAGS")},
           "t1": t1, "reps": reps, "accuracy": ACCURACY}
    STATE.update(res=res, json=a.json)
    log(f"Bricard A04, t1 = {t1} s, accuracy {ACCURACY:g} on the x of J3, {reps} timed reps; "
        f"jax {jax.__version__}, exudyn {exu.__version__}, {os.cpu_count()} CPUs, "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    t = time.perf_counter()
    model = jmbs.examples.bricard()
    res["import_s"], res["jmbs_build_s"] = IMPORT_S, time.perf_counter() - t
    ts = np.linspace(0.0, t1, int(round(t1 / 0.1)) + 1)

    # 0. compile time of the base variant, measured first in a fresh process (later variants
    # share parts of their programs with it, so their first-minus-second figure is smaller)
    log(f"\n[compile] {BASE}: first call - second call (fresh process)")
    first, _ = jmbs_run(model, t1, ts, jmbs.NullSpaceProjection(), jmbs.Projection(), diffrax.Tsit5(), 1e-6)
    second, _ = jmbs_run(model, t1, ts, jmbs.NullSpaceProjection(), jmbs.Projection(), diffrax.Tsit5(), 1e-6)
    res["compile_fresh"] = {"first_call_s": first, "second_call_s": second, "compile_s": first - second}
    log(f"    first {first:.1f} s, second {second:.2f} s: compile {first - second:.1f} s "
        f"(import {IMPORT_S['jmbs']:.1f} s, build {res['jmbs_build_s']:.2f} s)")

    # 1. reference: external (relative coordinates, SciPy); jmbs's own Dopri8 against it
    log("\n[reference] bricard_reference.py: joint angles, Lagrange, SciPy DOP853 at 1e-13 (and 1e-12)")
    ext, ext12 = external_reference(ts, 1e-13), external_reference(ts, 1e-12)
    x_ref = ext["x"]
    ref_self = float(np.max(np.abs(ext["x"] - ext12["x"])))
    _, sol = jmbs_run(model, t1, ts, jmbs.NullSpaceProjection(), jmbs.Projection(), diffrax.Dopri8(), 1e-12)
    jmbs_dopri8 = float(np.max(np.abs(tracked_x(model, sol.q) - x_ref)))
    i25, i5 = np.argmin(np.abs(ts - 2.5)), np.argmin(np.abs(ts - 5.0))
    log(f"    against 1e-12: {ref_self:.1e}; closure residual {ext['closure_residual']:.1e}; "
        f"{ext['rhs_calls']} right-hand sides; jmbs Dopri8 1e-12 against it: {jmbs_dopri8:.1e}")
    if t1 >= 5:
        log(f"    x(0) = {x_ref[0]:.6f}, x(2.5) = {x_ref[i25]:.6f}, x(5) = {x_ref[i5]:.6f}")
    res["reference"] = {"self_consistency": ref_self, "closure_residual": ext["closure_residual"],
                        "jmbs_dopri8_1e-12": jmbs_dopri8, "x": x_ref.tolist(), "ts": ts.tolist()}

    # 2. Exudyn, each setting up the step ladder; the fastest at the accuracy counts
    res["exudyn_variants"] = {}
    for label in EXUDYN_VARIANTS:
        log(f"\n[Exudyn] {label}, EigenDense full pivot; step ladder")
        res["exudyn_variants"][label] = exudyn_matched(model, t1, ts, x_ref, reps, EXUDYN_LADDER, label)
    timed = [e for e in res["exudyn_variants"].values() if "wall_s" in e]
    ex = res["exudyn"] = min(timed, key=lambda e: e["wall_s"]) if timed else {}
    if "steps" in ex:
        log(f"    fastest: {ex['variant']}, {ex['steps']} steps, {ex['wall_s']:.3f} s")
        if t1 >= 5:
            _, _, te, xe, _ = exudyn_run(model, t1, ex["steps"], 0.1, variant=EXUDYN_VARIANTS[ex["variant"]])
            log(f"    moves as predicted: x(2.5) = {xe[i25]:.6f}, x(5) = {xe[i5]:.6f}")

    # 3. jmbs variants
    res["jmbs"] = {}
    for name in names:
        log(f"\n[jmbs] {name}: tolerance ladder")
        res["jmbs"][name] = jmbs_matched(model, t1, ts, x_ref, name, reps, JMBS_LADDER)
        log(f"    compile (first - second call) {res['jmbs'][name]['compile_s']:.1f} s "
            f"(first {res['jmbs'][name]['first_call_s']:.1f} s)")
    base = res["jmbs"][BASE]

    # 4. extras on the base variant: 1001 saved times, breakdown
    extras = res["jmbs_extras"] = {}
    form, stab, solver = jmbs.NullSpaceProjection(), jmbs.Projection(), diffrax.Tsit5()
    extra_reps = 1 if quick else max(reps, 3)

    def extra(label, grid, reactions):
        wd = 240.0 if reactions else 600.0  # with reactions: hangs seen (see the Watchdog)
        first, _ = jmbs_run(model, t1, grid, form, stab, solver, base["tol"], reactions, wd)
        walls = [jmbs_run(model, t1, grid, form, stab, solver, base["tol"], reactions, wd)[0]
                 for _ in range(extra_reps)]
        extras[label] = {"first_call_s": first, "wall_s": median(walls), "walls": walls}
        log(f"    {label}: median {median(walls):.3f} s (first call {first:.1f} s)")

    if "tol" in base:
        log(f"\n[jmbs extras] {BASE} at tol {base['tol']:.0e}")
        extra("reactions=False, 1001 saves", np.linspace(0, t1, 10 * (len(ts) - 1) + 1), False)
        bd = jmbs_breakdown(model, form, model.q0, model.v0, n=10 if quick else 30)
        extras["breakdown_s"] = bd
        steps, saves = base["steps"], len(ts)
        evals = 7 * steps  # Tsit5 under the projection wrapper: 7 stages per step (no FSAL reuse)
        est = {"vector_field": evals * bd["vector_field"], "projection": (steps + saves) * bd["projection"],
               "post": saves * bd["post_per_save"]}
        extras["estimate_s"] = est
        log("    per call (µs): " + ", ".join(f"{k} {v * 1e6:.0f}" for k, v in bd.items()))
        log(f"    estimate for {steps} steps, {saves} saves: "
            + ", ".join(f"{k} {v:.3f} s" for k, v in est.items())
            + f"; sum {sum(est.values()):.3f} s against {base['wall_s']:.3f} s measured")
    save(res, a.json)

    # 5. batch
    batch = res["batch"] = {"sizes": {}}
    if "tol" in base and "steps" in ex:
        tol = jnp.asarray(base["tol"])
        f = jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0)
        ts_j = jnp.asarray(ts)

        @jax.jit
        def run_batch(p):
            def one(p):
                sol = jmbs.simulate(model.with_params(p), t1, formulation=f, saveat=ts_j, reactions=False,
                                    throw=False, max_steps=1_000_000,
                                    stepsize_controller=diffrax.PIDController(rtol=tol, atol=tol))
                return sol.q[-1], ~sol.ok, sol.stats["num_steps"]
            return jax.vmap(one)(p)

        rng = np.random.default_rng(0)
        nmax = max(batch_sizes)
        masses_all = 1.0 + 0.05 * rng.uniform(-1.0, 1.0, (nmax, 5))
        log(f"\n[batch] jmbs vmap over rod masses x (1 +- 5 %), tol {base['tol']:.0e}")
        for B in batch_sizes:
            params = {f"rod{k + 1}.mass": jnp.asarray(masses_all[:B, k]) for k in range(5)}
            t = time.perf_counter()
            try:
                with Watchdog(f"jmbs batch {B}, first call", 1800.0):
                    qf, rc, nsteps = jax.block_until_ready(run_batch(params))
            except Exception as e:
                msg = f"{type(e).__name__}: {e}"
                log(f"    batch {B}: FAILED: {msg[:2000]}")
                batch["sizes"][B] = {"error": msg}
                break
            first = time.perf_counter() - t
            walls = []
            for _ in range(batch_reps):
                t = time.perf_counter()
                with Watchdog(f"jmbs batch {B}", 1800.0):
                    qf, rc, nsteps = jax.block_until_ready(run_batch(params))
                walls.append(time.perf_counter() - t)
            w = median(walls)
            batch["sizes"][B] = {"first_call_s": first, "wall_s": w, "walls": walls, "per_sim_s": w / B,
                                 "failed": int(np.sum(np.asarray(rc) != 0)),
                                 "steps_max": int(np.max(nsteps)), "steps_median": float(np.median(nsteps))}
            log(f"    batch {B}: median {w:.2f} s = {w / B * 1e3:.1f} ms per simulation "
                f"(first call {first:.1f} s; steps median {np.median(nsteps):.0f}, max {np.max(nsteps)}; "
                f"failed {batch['sizes'][B]['failed']})")
        log(f"\n[batch] Exudyn: {ex_batch_runs} sequential runs with the same masses, {ex['steps']} steps")
        walls, dx = [], []
        for i in range(ex_batch_runs):
            solve, _, te, xe, ok = exudyn_run(model, t1, ex["steps"], float(ts[1] - ts[0]), masses_all[i],
                                              variant=EXUDYN_VARIANTS[ex["variant"]])
            walls.append(solve)
            if i == 0:  # the same parameter set in both codes
                p0 = {f"rod{k + 1}.mass": jnp.asarray(masses_all[0, k]) for k in range(5)}
                _, sol0 = jmbs_run(model.with_params(p0), t1, ts, f, jmbs.Projection(), diffrax.Tsit5(),
                                   base["tol"])
                dx.append(float(np.max(np.abs(tracked_x(model, sol0.q) - xe))))
        batch["exudyn_per_run_s"] = median(walls)
        batch["exudyn_walls"] = walls
        batch["perturbed_max_dx"] = dx[0] if dx else None
        log(f"    median {median(walls):.3f} s per run; 256 runs ~ {256 * median(walls):.0f} s "
            "(extrapolated); "
            f"perturbed set 0: max |x_jmbs - x_exudyn| = {batch['perturbed_max_dx']:.1e}")
    save(res, a.json)

    # 6. reactions=True last: its batched pivoted QR and LU are where a hang was seen
    if "tol" in base and not a.no_reactions:
        log(f"\n[jmbs extras] {BASE} at tol {base['tol']:.0e}, with reactions")
        extra("reactions=True, 101 saves", ts, True)

    summary(res)
    save(res, a.json)


if __name__ == "__main__":
    warnings.filterwarnings("ignore", category=DeprecationWarning, module="exudyn")
    main()
