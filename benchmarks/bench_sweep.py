"""Sharded design sweep benchmark: `jmbs.batch_map` over 1, 2 and 4 forced host devices.

    .venv/bin/python benchmarks/bench_sweep.py [--quick] [--json PATH] [--designs N] [--chunk C]
                                               [--reps R] [--devices 1,2,4] [--nproc P]

The sweep: `--designs` designs of the IFToMM A04 Bricard mechanism
(`jmbs.examples.bricard()`, C 30 x 30, one redundant constraint), each one scaling the
whole mechanism by s in (0.5, 2) (joint points, rod centres, inertias) and every rod mass
by its own factor in (0.5, 2). Per design, traced under `jax.vmap` by `jmbs.batch_map`:

1. `model.with_params(p)`, `C` at the reference configuration, the null-space method's
   decisions on the equilibrated `C` (`jmbs.NullSpace().decide`: rank, unique elements
   and components);
2. after them, a consistent velocity (`jmbs.consistent_velocity` from a guess) and
   `jmbs.reactions` with `jmbs.NullSpaceProjection` prepared on the nominal model
   (accelerations, multipliers, forces and torques of the six joints, their uniqueness).

Each device count runs in its own process (the count is fixed when JAX starts:
`XLA_FLAGS=--xla_force_host_platform_device_count=D`), with `PJRT_NPROC=--nproc` (default
16) so that XLA's CPU thread pool has spare threads (without them, JAX 0.10's batched
LAPACK kernels deadlock the pool when several devices run them at once: docs/batch.md).
`1 (pool 1)` is one device with `PJRT_NPROC=1`: XLA's pool then has one thread and
nothing runs in parallel (with a larger pool, one device still spreads the batch of each
large LAPACK call over the pool's threads).

Each process calls `batch_map(sweep, designs, chunk_size=--chunk)` once to compile (the
processes compile one after the other), then waits. The timing runs in `--reps` rounds;
in each round every process makes one call in turn, so a change of load by other
processes hits all device counts alike. Throughput is designs per second of the median
call; compile time is the first call's time minus the median. `cores` is the process's
CPU time over the wall time of a call, `others` the share of the CPUs that other processes
used meanwhile (from /proc/stat): on a shared machine they bound the possible speed-up.
Every run's results are
checked against those of the first: decisions exactly, values relative to each array's
largest entry.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------------------------------------
# worker: one device count, in its own process
# ---------------------------------------------------------------------------------------------
def worker(a):
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jmbs

    assert len(jax.devices()) == a.worker, (jax.devices(), a.worker)
    model = jmbs.examples.bricard()
    f = jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0)
    sets = jnp.asarray(jmbs.element_sets(model))
    p0 = {k: np.asarray(v) for k, v in model.params().items()}

    rng = np.random.default_rng(0)
    n = a.designs
    s = rng.uniform(0.5, 2.0, n)
    masses = rng.uniform(0.5, 2.0, (n, 5))
    designs = {}
    for k in range(5):
        rod, m = f"rod{k + 1}", masses[:, k]
        L, w = s, 0.1 * s  # a 1 m rod of section 0.1 m, scaled
        designs[f"{rod}.mass"] = m
        designs[f"{rod}.inertia"] = np.stack([m * w**2 / 6, m * (L**2 + w**2) / 12,
                                              m * (L**2 + w**2) / 12], 1)
        designs[f"{rod}.position"] = s[:, None] * p0[f"{rod}.position"]
    for k in range(6):
        designs[f"J{k + 1}.point"] = s[:, None] * p0[f"J{k + 1}.point"]
    guess = jnp.zeros(model.nv).at[3:6].set(1.0)

    def sweep(p):
        m = model.with_params(p)
        q = m.q0
        dec = jmbs.NullSpace().decide(jmbs.equilibrate(m, jmbs.constraint_matrix(m, q, 0.0)), sets)
        dec, m = jax.lax.optimization_barrier((dec, m))
        v = jmbs.consistent_velocity(m, q, guess)
        r = jmbs.reactions(m, q, v, 0.0, formulation=f)
        return {"rank": dec.rank, "unique": dec.unique, "component_unique": dec.component_unique,
                "v_dot": r.v_dot, "multipliers": r.reactions.multipliers, "forces": r.reactions.forces,
                "torques": r.reactions.torques, "reaction_unique": r.reactions.unique}

    t = time.perf_counter()
    out = jmbs.batch_map(sweep, designs, chunk_size=a.chunk, progress=False)
    first = time.perf_counter() - t
    np.savez(a.out, **out)
    print("READY " + json.dumps({"devices": a.worker, "first_call_s": first,
                                 "rank": np.bincount(out["rank"]).tolist(),
                                 "xla_flags": os.environ.get("XLA_FLAGS")}), flush=True)
    for line in sys.stdin:  # the driver asks for one timed call at a time
        if line.strip() != "run":
            break
        t, c = time.perf_counter(), time.process_time()
        jmbs.batch_map(sweep, designs, chunk_size=a.chunk, progress=False)
        print(f"TIME {time.perf_counter() - t} {time.process_time() - c}", flush=True)


# ---------------------------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------------------------
def cpu_ticks() -> tuple[int, int]:
    """Clock ticks since boot of all CPUs: total, and busy (neither idle nor waiting for I/O)."""
    with open("/proc/stat") as fh:
        f = [int(x) for x in fh.readline().split()[1:9]]
    return sum(f), sum(f) - f[3] - f[4]


class Worker:
    """One device count in a process of its own: compiles at start, then times one call per `run`."""

    def __init__(self, label, devices, nproc, a, out):
        self.label, self.devices, self.nproc, self.out = label, devices, nproc, out
        env = dict(os.environ)
        force = f"--xla_force_host_platform_device_count={devices}"
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + force).strip()
        env["PJRT_NPROC"] = str(nproc)
        cmd = [sys.executable, os.path.join(HERE, "bench_sweep.py"), "--worker", str(devices),
               "--designs", str(a.designs), "--chunk", str(a.chunk), "--out", out]
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1)
        self.res = {"label": label, "devices": devices, "pjrt_nproc": nproc, "walls": []}

    def _line(self, prefix, timeout):
        """The next stdout line starting with `prefix`, or None (hang or failure)."""
        box = []
        while True:
            box.clear()
            reader = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
            reader.start()
            reader.join(timeout)
            if not box:
                self.res["hang"] = True
                log(f"    {self.label}: no answer after {timeout:.0f} s (a hang?)")
                return None
            if not box[0]:
                self.res["error"] = self.proc.stderr.read()[-3000:]
                log(f"    {self.label}: failed:\n{self.res['error']}")
                return None
            if box[0].startswith(prefix):
                return box[0][len(prefix):].strip()

    def start(self, timeout):
        load = os.getloadavg()[0]
        line = self._line("READY ", timeout)
        if line is not None:
            self.res.update(json.loads(line))
            log(f"    {self.label}: first call (compiles) {self.res['first_call_s']:.1f} s; "
                f"load {load:.1f}")
        return line is not None

    def run(self, timeout):
        t0 = cpu_ticks()
        self.proc.stdin.write("run\n")
        line = self._line("TIME ", timeout)
        if line is not None:
            wall, cpu = (float(x) for x in line.split())
            t1 = cpu_ticks()
            total = max(t1[0] - t0[0], 1) / os.sysconf("SC_CLK_TCK")  # CPU-seconds of all CPUs
            busy = (t1[1] - t0[1]) / os.sysconf("SC_CLK_TCK")
            self.res["walls"].append(wall)
            self.res.setdefault("cores", []).append(cpu / wall)
            self.res.setdefault("others", []).append(max(0.0, busy - cpu) / total)
        return line is not None

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
                self.proc.wait(30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()


def compare(ref_path, path):
    """Largest differences to the reference run: decisions (count of mismatches), values."""
    import numpy as np

    a, b = np.load(ref_path), np.load(path)
    mismatches, worst = 0, 0.0
    for k in a.files:
        if a[k].dtype.kind in "biu":
            mismatches += int(np.sum(a[k] != b[k]))
        else:
            worst = max(worst, float(np.max(np.abs(a[k] - b[k]) / np.maximum(1.0, np.abs(a[k]).max()))))
    return mismatches, worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1024 designs, 3 repetitions")
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--designs", type=int, default=None, help="designs per sweep (default 4096; quick 1024)")
    ap.add_argument("--chunk", type=int, default=1024, help="batch_map chunk_size (default 1024)")
    ap.add_argument("--reps", type=int, default=None, help="timed repetitions (default 5; quick 3)")
    ap.add_argument("--devices", default="1,2,4", help="forced host device counts (default 1,2,4)")
    ap.add_argument("--nproc", type=int, default=16, help="PJRT_NPROC: XLA's CPU pool size (default 16)")
    ap.add_argument("--no-pool1", action="store_true", help="skip the one-device, one-thread reference")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per call before a hang is declared")
    ap.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    a.designs = a.designs or (1024 if a.quick else 4096)
    a.reps = a.reps or (3 if a.quick else 5)
    if a.worker is not None:
        return worker(a)

    counts = [int(c) for c in a.devices.split(",") if c]
    log(f"Bricard design sweep with jmbs.batch_map: {a.designs} designs, chunk {a.chunk}, {a.reps} timed "
        f"reps; devices {counts}, PJRT_NPROC={a.nproc}; {os.cpu_count()} CPUs, "
        f"python {platform.python_version()}")
    res = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                       "processor": platform.processor()},
           "designs": a.designs, "chunk": a.chunk, "reps": a.reps, "nproc": a.nproc, "runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        plan = [(f"{d} device{'s' if d > 1 else ''}", d, a.nproc) for d in counts]
        if not a.no_pool1:
            plan.insert(0, ("1 (pool 1)", 1, 1))
        # compile one after the other, then time in rounds: each round times every device
        # count once, so a change of load by other processes hits them alike
        workers = []
        log("\n[compile] one process per device count")
        for k, (label, d, nproc) in enumerate(plan):
            w = Worker(label, d, nproc, a, os.path.join(tmp, f"run{k}.npz"))
            if w.start(a.timeout):
                workers.append(w)
            else:
                w.close()
            res["runs"].append(w.res)
        log(f"\n[timing] {a.reps} rounds")
        loads = []
        for i in range(a.reps):
            loads.append(os.getloadavg()[0])
            alive = []
            for w in workers:
                if w.run(a.timeout):
                    alive.append(w)
                else:
                    w.close()
            workers = alive
            log(f"    round {i + 1}: " + ", ".join(
                f"{w.label} {w.res['walls'][-1]:.3f} s ({w.res['cores'][-1]:.2f} cores, others "
                f"{100 * w.res['others'][-1]:.0f}%)" for w in workers) + f"; load {loads[-1]:.1f}")
        res["load_average"] = loads
        for w in workers:
            w.close()
        ref = None
        for r, (label, d, nproc) in zip(res["runs"], plan):
            if r.get("walls"):
                r["median_s"], r["min_s"] = statistics.median(r["walls"]), min(r["walls"])
                r["designs_per_s"] = a.designs / r["median_s"]
                r["compile_s"] = r["first_call_s"] - r["median_s"]
                r["cores_median"] = statistics.median(r["cores"])
                r["others_median"] = statistics.median(r["others"])
                path = os.path.join(tmp, f"run{plan.index((label, d, nproc))}.npz")
                if ref is None:
                    ref = path
                else:
                    r["decision_mismatches"], r["max_rel_diff"] = compare(ref, path)
    base = next((r for r in res["runs"] if r.get("devices") == 1 and r.get("pjrt_nproc") == a.nproc
                 and "median_s" in r), None)
    seq = next((r for r in res["runs"] if r.get("pjrt_nproc") == 1 and "median_s" in r), None)
    log("\n" + "=" * 104)
    log(f"Bricard design sweep, {a.designs} designs, chunk_size {a.chunk}, median of {a.reps} calls after "
        f"a compiling call; PJRT_NPROC={a.nproc} unless noted; {os.cpu_count()} CPUs")
    log(f"{'devices':12s} {'median s':>9s} {'min s':>8s} {'designs/s':>10s} {'vs 1 dev':>9s} "
        f"{'vs pool 1':>9s} {'cores':>6s} {'others':>7s} {'compile s':>10s} {'first s':>8s} "
        f"{'decisions':>10s} {'max diff':>9s}")
    for r in res["runs"]:
        if "median_s" not in r:
            log(f"{r['label']:12s} {'hang' if r.get('hang') else 'failed':>9s}")
            continue
        ratio = base["median_s"] / r["median_s"] if base else float("nan")
        r["speedup_vs_1"] = ratio
        r["speedup_vs_pool1"] = seq["median_s"] / r["median_s"] if seq else float("nan")
        dec = r.get("decision_mismatches")
        log(f"{r['label']:12s} {r['median_s']:>9.3f} {r['min_s']:>8.3f} {r['designs_per_s']:>10.0f} "
            f"{ratio:>9.2f} {r['speedup_vs_pool1']:>9.2f} {r['cores_median']:>6.2f} "
            f"{100 * r['others_median']:>6.0f}% {r['compile_s']:>10.1f} {r['first_call_s']:>8.1f} "
            f"{'ref' if dec is None else ('equal' if dec == 0 else f'{dec} differ'):>10s} "
            f"{r.get('max_rel_diff', 0.0):>9.1e}")
    log("Expected on 2 cores: at most 2x. 'cores': CPU time of the process / wall time of a call; "
        "'others': share of all CPUs' time that other processes (and the hypervisor: steal) used "
        "meanwhile; medians over the calls. 'decisions': against the first run (exactly equal); "
        "'max diff': largest value difference, relative to each array's largest entry.")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(res, fh, indent=1)
        log(f"wrote {a.json}")


if __name__ == "__main__":
    main()
