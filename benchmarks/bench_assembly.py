"""Constraint assembly benchmark: `C` and `Gamma` of the IFToMM A02 N-four-bar chain.

    .venv/bin/python benchmarks/bench_assembly.py [--quick] [--pin] [--wait-idle S] [--json PATH]

For N = 10, 40, 160 it times, side by side in one process:

- `jmbs`: `jax.jit(lambda q, v: jmbs.constraint_terms(model, q, v, 0.0))` (model closed over);
- `jmbs(m arg)`: the same with the model passed as a jit argument;
- `jmbs direct`: `jmbs.constraint_terms(model, q, v, 0.0)` as a user calls it (only when
  the public function is itself jitted);
- `np loop`, `np vec`: plain NumPy assemblies of the same `C`, `b` and `Gamma` for planar
  revolute joints (a Python loop over the joints; a vectorised version), checked against
  jmbs to 1e-12 at `q0, v0` and at a random state;
- `XLA floor`: a jitted call that only returns zero arrays of the output shapes
  (dispatch plus writing a dense `nc x nv` matrix);

and the compile time of a fresh jit of the first (lower + compile, and first call).

Run times are per call (`jax.block_until_ready` on the result): the median over
`--calls` calls, in `--rounds` rounds in which the variants take turns; the table gives the
median of the round medians and [the minimum over all calls]. `others` is the share of
the CPUs' time that other processes used meanwhile (from /proc/stat); `--wait-idle S`
first waits up to S seconds for an idle machine. `--pin` restricts every thread of the
process to CPU 0 (XLA's CPU runtime otherwise spreads over, and migrates between, the
cores).
"""


import argparse
import json
import os
import platform
import statistics
import subprocess
import time

import jax
import jax.numpy as jnp
import numpy as np

import jmbs

NS = (10, 40, 160)


def pin_to_cpu0() -> None:
    """Restrict every existing thread of this process to CPU 0 (new threads inherit it)."""
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), {0})
        except OSError:  # a thread that ended meanwhile
            pass


# --------------------------------------------------------------------------------------
# The honest alternative: plain NumPy for a model made only of planar revolute joints
# --------------------------------------------------------------------------------------


class RevoluteChain:
    """Joint data read from a jmbs model: per joint the two body indices (the ground is
    `n_bodies`), the local joint points and the first row in `C`."""

    def __init__(self, model):
        if model.dim != 2 or any(s.kind != "revolute" for s in model.element_specs):
            raise ValueError("the NumPy reference handles planar revolute joints only")
        (group,) = model.groups
        specs = {s.name: s for s in model.element_specs}
        self.n_bodies, self.nc, self.nv = model.n_bodies, model.nc, model.nv
        self.ground = model.n_bodies
        self.body_i = np.array([specs[n].bodies[0] for n in group.names])
        self.body_j = np.array([specs[n].bodies[1] for n in group.names])
        self.s_i = np.asarray(group.s_i, dtype=float)
        self.s_j = np.asarray(group.s_j, dtype=float)
        self.row = np.array([model.rows(n).start for n in group.names])
        self.joints = [tuple(x) for x in zip(self.body_i.tolist(), self.body_j.tolist(),
                                             self.s_i, self.s_j, self.row.tolist())]


def numpy_loop(chain: RevoluteChain, q: np.ndarray, v: np.ndarray):
    """What a typical user writes: one joint at a time, 2x2 rotation matrices."""
    C = np.zeros((chain.nc, chain.nv))
    Gamma = np.zeros(chain.nc)
    for bi, bj, si, sj, r in chain.joints:
        for body, s, sign in ((bi, si, -1.0), (bj, sj, 1.0)):
            if body == chain.ground:
                continue
            k = 3 * body
            phi, w = q[k + 2], v[k + 2]
            c, sn = np.cos(phi), np.sin(phi)
            A = np.array([[c, -sn], [sn, c]])
            dA = np.array([[-sn, -c], [c, -sn]])
            C[r:r + 2, k:k + 2] = sign * np.eye(2)
            C[r:r + 2, k + 2] = sign * (dA @ s)
            Gamma[r:r + 2] += sign * (A @ s) * w**2
    return C, np.zeros(chain.nc), Gamma


class NumpyVectorised:
    """All joints at once: index arrays prepared once, fancy indexing per call."""

    def __init__(self, chain: RevoluteChain):
        # One entry per (joint, side) whose body is not the ground.
        sides = [(chain.body_i, chain.s_i, -1.0), (chain.body_j, chain.s_j, 1.0)]
        body = np.concatenate([b for b, _, _ in sides])
        s = np.concatenate([s for _, s, _ in sides])
        sign = np.concatenate([np.full(len(b), g) for b, _, g in sides])
        row = np.concatenate([chain.row, chain.row])
        keep = body != chain.ground
        self.body, self.sx, self.sy = body[keep], s[keep, 0], s[keep, 1]
        self.sign, self.r0, self.r1 = sign[keep], row[keep], row[keep] + 1
        self.phi_idx = 3 * self.body + 2
        self.nc, self.nv = chain.nc, chain.nv
        # Constant +-1 entries of C, and the rows/columns of the phi-column entries.
        self.const_rows = np.concatenate([self.r0, self.r1])
        self.const_cols = np.concatenate([3 * self.body, 3 * self.body + 1])
        self.const_vals = np.concatenate([self.sign, self.sign])
        self.phi_rows = np.concatenate([self.r0, self.r1])
        self.phi_cols = np.concatenate([self.phi_idx, self.phi_idx])
        self.gamma_rows = np.concatenate([self.r0, self.r1])

    def __call__(self, q: np.ndarray, v: np.ndarray):
        phi, w2 = q[self.phi_idx], v[self.phi_idx] ** 2
        c, sn = np.cos(phi), np.sin(phi)
        ax, ay = c * self.sx - sn * self.sy, sn * self.sx + c * self.sy  # A s
        C = np.zeros((self.nc, self.nv))
        C[self.const_rows, self.const_cols] = self.const_vals
        # dA/dphi s = (-A s)_y, (A s)_x
        C[self.phi_rows, self.phi_cols] = np.concatenate([-self.sign * ay, self.sign * ax])
        Gamma = np.zeros(self.nc)
        g = self.sign * w2
        np.add.at(Gamma, self.gamma_rows, np.concatenate([g * ax, g * ay]))
        return C, np.zeros(self.nc), Gamma


# --------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------


def time_calls(fns: dict, calls: dict, rounds: int) -> dict:
    """Per-call wall times in µs of each function: median of the round medians, and the
    minimum. The functions take turns round by round, so that a disturbance by other
    processes hits them alike."""
    for name, fn in fns.items():  # warm-up
        for _ in range(min(20, calls[name])):
            fn()
    medians = {name: [] for name in fns}
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, fn in fns.items():
            ts = np.empty(calls[name])
            for k in range(len(ts)):
                t0 = time.perf_counter()
                fn()
                ts[k] = time.perf_counter() - t0
            medians[name].append(float(np.median(ts)) * 1e6)
            best[name] = min(best[name], float(ts.min()) * 1e6)
    return {name: {"median_us": statistics.median(medians[name]), "min_us": best[name],
                   "round_medians_us": medians[name]} for name in fns}


def compile_time(model, q, v, repeats: int) -> dict:
    """Seconds for lower + compile of a fresh jit, and for a fresh jit's first call."""
    lower_compile, first_call = [], []
    for _ in range(repeats):
        f = jax.jit(lambda q, v: jmbs.constraint_terms(model, q, v, 0.0))
        t0 = time.perf_counter()
        f.lower(q, v).compile()
        lower_compile.append(time.perf_counter() - t0)
        g = jax.jit(lambda q, v: jmbs.constraint_terms(model, q, v, 0.0))
        t0 = time.perf_counter()
        jax.block_until_ready(g(q, v))
        first_call.append(time.perf_counter() - t0)
    return {"compile_s": statistics.median(lower_compile),
            "first_call_s": statistics.median(first_call)}


def max_diff(a, b) -> float:
    return max(float(np.max(np.abs(np.asarray(x) - np.asarray(y)))) for x, y in zip(a, b))


def bench(n: int, args) -> dict:
    model = jmbs.examples.n_four_bar(n)
    chain = RevoluteChain(model)
    vec = NumpyVectorised(chain)
    q, v = jnp.asarray(model.q0), jnp.asarray(model.v0)
    comp = compile_time(model, q, v, args.compiles)
    f = jax.jit(lambda q, v: jmbs.constraint_terms(model, q, v, 0.0))
    g = jax.jit(lambda m, q, v: jmbs.constraint_terms(m, q, v, 0.0))
    nc, nv = model.nc, model.nv
    # Floor: a jitted call that only writes outputs of the same shapes (dispatch + zeroing).
    floor = jax.jit(lambda q, v: (jnp.zeros((nc, nv)).at[0, 0].set(q[0]), jnp.zeros(nc),
                                  jnp.zeros(nc).at[0].set(v[0])))

    # Correctness: both NumPy versions and the model-argument jit equal the jitted jmbs
    # function at q0, v0 and at a perturbed state.
    rng = np.random.default_rng(n)
    states = [(np.asarray(model.q0), np.asarray(model.v0)),
              (np.asarray(model.q0) + 0.1 * rng.standard_normal(model.nq),
               rng.standard_normal(model.nv))]
    for qn, vn in states:
        ref = f(jnp.asarray(qn), jnp.asarray(vn))
        for name, out in (("NumPy loop", numpy_loop(chain, qn, vn)),
                          ("NumPy vectorised", vec(qn, vn)),
                          ("jmbs (model argument)", g(model, jnp.asarray(qn), jnp.asarray(vn)))):
            err = max_diff(ref, out)
            if err > 1e-12:
                raise AssertionError(f"N={n}: {name} differs from jmbs by {err:.3g}")

    qn, vn = np.asarray(model.q0), np.asarray(model.v0)
    fns = {
        "jmbs": lambda: jax.block_until_ready(f(q, v)),
        "jmbs_model_arg": lambda: jax.block_until_ready(g(model, q, v)),
        "numpy_loop": lambda: numpy_loop(chain, qn, vn),
        "numpy_vectorised": lambda: vec(qn, vn),
        "xla_floor": lambda: jax.block_until_ready(floor(q, v)),
    }
    # The public function as a user calls it, if it is jitted itself (one warm call < 20 ms).
    jax.block_until_ready(jmbs.constraint_terms(model, q, v, 0.0))
    t0 = time.perf_counter()
    jax.block_until_ready(jmbs.constraint_terms(model, q, v, 0.0))
    if time.perf_counter() - t0 < 0.02:
        fns["jmbs_direct"] = lambda: jax.block_until_ready(jmbs.constraint_terms(model, q, v, 0.0))
    calls = dict.fromkeys(fns, args.calls)
    calls["numpy_loop"] = max(10, args.calls // (10 if n >= 100 else 3))
    return {"N": n, "bodies": model.n_bodies, "joints": len(model.element_specs),
            "nc": model.nc, "nv": model.nv, **time_calls(fns, calls, args.rounds), **comp}


def print_table(results: list[dict]) -> None:
    def cell(x, w=14):
        if x is None:
            return "n/a".rjust(w)
        return f"{x['median_us']:.1f} [{x['min_us']:.1f}]".rjust(w)

    head = (f"{'N':>4} {'bodies':>6} {'joints':>6} | {'jmbs':>14} {'jmbs(m arg)':>14} "
            f"{'jmbs direct':>14} | {'np loop':>8} {'np vec':>14} | {'loop/jmbs':>9} "
            f"{'vec/jmbs':>8} | {'XLA floor':>14} | {'compile s':>9} {'1st call s':>10} | "
            f"{'others':>6}")
    print("run times in µs: median of round medians [min over all calls]; others: CPU time "
          "used by other processes during the row")
    print(head)
    print("-" * len(head))
    for r in results:
        j, lp, vc = r["jmbs"], r["numpy_loop"], r["numpy_vectorised"]
        print(f"{r['N']:>4} {r['bodies']:>6} {r['joints']:>6} | {cell(j)} "
              f"{cell(r['jmbs_model_arg'])} {cell(r.get('jmbs_direct'))} | "
              f"{lp['median_us']:>8.0f} {cell(vc)} | "
              f"{lp['median_us'] / j['median_us']:>9.1f} {vc['median_us'] / j['median_us']:>8.2f}"
              f" | {cell(r['xla_floor'])} | {r['compile_s']:>9.3f} {r['first_call_s']:>10.3f}"
              f" | {100 * r['others_busy']:>5.0f}%")


def cpu_ticks() -> tuple[int, int, int]:
    """Clock ticks since boot: all CPUs' total and busy time, and this process's own."""
    with open("/proc/stat") as fh:
        f = [int(x) for x in fh.readline().split()[1:9]]
    with open("/proc/self/stat") as fh:
        own = fh.read().rsplit(")", 1)[1].split()
    return sum(f), sum(f) - f[3] - f[4], int(own[11]) + int(own[12])


def others_busy(t0: tuple, t1: tuple) -> float:
    """Fraction of the CPUs' time between two `cpu_ticks()` that other processes used."""
    total = max(t1[0] - t0[0], 1)
    return max(0.0, (t1[1] - t0[1]) - (t1[2] - t0[2])) / total


def cpu_busy(seconds: float = 1.0) -> float:
    t0 = cpu_ticks()
    time.sleep(seconds)
    return others_busy(t0, cpu_ticks())


def wait_idle(limit_s: float) -> None:
    start, idle = time.perf_counter(), 0
    while time.perf_counter() - start < limit_s and idle < 5:
        idle = idle + 1 if cpu_busy() < 0.05 else 0
    if idle < 5:
        print(f"warning: the CPUs did not become idle within {limit_s:.0f} s")


def git_state() -> str:
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                             text=True, cwd=os.path.dirname(os.path.abspath(__file__)))
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer calls and rounds")
    p.add_argument("--pin", action="store_true", help="pin the process to CPU 0")
    p.add_argument("--ns", type=int, nargs="+", default=list(NS), help="chain sizes N")
    p.add_argument("--calls", type=int, default=None, help="calls per round (default 300)")
    p.add_argument("--rounds", type=int, default=None, help="rounds (default 5)")
    p.add_argument("--compiles", type=int, default=None, help="fresh compiles per N (default 3)")
    p.add_argument("--json", default=None, help="also write the results to this file")
    p.add_argument("--wait-idle", type=float, default=0.0, metavar="S",
                   help="first wait up to S seconds for the other processes to leave the "
                        "CPUs idle (< 5%% busy for 5 s)")
    args = p.parse_args()
    args.calls = args.calls or (60 if args.quick else 300)
    args.rounds = args.rounds or (3 if args.quick else 5)
    args.compiles = args.compiles or (1 if args.quick else 3)
    if args.pin:
        pin_to_cpu0()
    if args.wait_idle:
        wait_idle(args.wait_idle)

    # Warm up JAX (backend start, first trace of jmbs) on a small chain, unmeasured.
    small = jmbs.examples.n_four_bar(2)
    jax.block_until_ready(jax.jit(lambda q, v: jmbs.constraint_terms(small, q, v, 0.0))(
        small.q0, small.v0))

    cpus = sorted(os.sched_getaffinity(0))
    info = {"jax": jax.__version__, "numpy": np.__version__, "python": platform.python_version(),
            "cpu_count": os.cpu_count(), "affinity": cpus, "pinned": args.pin,
            "processor": platform.processor() or platform.machine(),
            "calls": args.calls, "rounds": args.rounds, "compiles": args.compiles,
            "git": git_state(), "jmbs_file": jmbs.__file__,
            "busy_others_start": cpu_busy()}
    print(f"jax {info['jax']}, numpy {info['numpy']}, {jax.devices()[0].platform} device, "
          f"{info['cpu_count']} CPUs, affinity {cpus}{' (pinned)' if args.pin else ''}; "
          f"{args.calls} calls x {args.rounds} rounds; jmbs from "
          f"{os.path.dirname(info['jmbs_file'])}, repository at {info['git']}")
    if info["busy_others_start"] > 0.1:
        print(f"warning: other processes kept {100 * info['busy_others_start']:.0f}% of the "
              "CPUs busy at start; the timings will be slower and noisier")

    results = []
    for n in args.ns:
        t0 = cpu_ticks()
        results.append(bench(n, args))
        results[-1]["others_busy"] = others_busy(t0, cpu_ticks())
        print(f"  N={n} done", flush=True)
    print_table(results)
    by_n = {r["N"]: r for r in results}
    if 10 in by_n and 160 in by_n:
        ratio = by_n[160]["compile_s"] / by_n[10]["compile_s"]
        first = by_n[160]["first_call_s"] / by_n[10]["first_call_s"]
        print(f"compile time N=160 / N=10: {ratio:.2f} (lower+compile), {first:.2f} (first call)")
    info["busy_others_end"] = cpu_busy()
    print(f"CPUs busy with other processes: {100 * info['busy_others_start']:.0f}% at start, "
          f"{100 * info['busy_others_end']:.0f}% at end")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"info": info, "results": results}, fh, indent=1)


if __name__ == "__main__":
    main()
