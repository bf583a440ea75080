"""`jmbs.batch_map` across processes: one process against two under `jax.distributed`.

    .venv/bin/python benchmarks/bench_distributed.py [--quick] [--designs N] [--chunk C]
                                                     [--reps R] [--json PATH]

The sweep: `--designs` designs of the redundant parallelogram (`jmbs.examples.parallelogram()`,
the design family of docs/batch.md: crank spacing d, crank length h, coupler mass), per
design the null-space method's decisions (`jmbs.solvability_decisions`) and the reactions
at rest of `jmbs.NullSpaceProjection` prepared on the nominal model.

Three configurations, each in processes of their own with one CPU device per process:

- `1 process, 1 core`: pinned to CPU 0 (`os.sched_setaffinity`, as `taskset -c 0`, before
  JAX starts, so XLA's thread pool has one thread): the baseline, one core's worth;
- `2 processes, 1 core each`: `jax.distributed` with a coordinator on 127.0.0.1 and gloo
  CPU collectives, process i pinned to CPU i;
- `1 process, 2 cores`: not pinned (XLA may spread a large batched LAPACK call over its
  pool's threads): what one process gets from the same two cores.

Every process gets `--chunk` elements per device and call (`chunk_size` is `--chunk` times
the number of processes), so every device runs the same compiled program on the same
number of elements, and the results must be bit for bit those of the baseline (checked).
Each configuration first makes one call that compiles, then waits; the timing runs in
`--reps` rounds, each round timing one call of every configuration in turn, so a change
of load by other processes hits them alike. The two processes start a call together
(a barrier), and the call's time is the slower process's. `others` is the share of all
CPUs' time that other processes used during the call (from /proc/stat).
"""

import argparse
import json
import os
import platform
import queue
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from bench_sweep import cpu_ticks  # (the scripts run from benchmarks/)


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------------------------------------
# worker: one process of one configuration
# ---------------------------------------------------------------------------------------------
def worker(a):
    if a.core is not None:  # before JAX starts: XLA sizes its thread pool from the affinity
        os.sched_setaffinity(0, {a.core})
    import jax

    jax.config.update("jax_enable_x64", True)
    if a.processes > 1:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(coordinator_address=f"127.0.0.1:{a.port}", num_processes=a.processes,
                                   process_id=a.process_id, initialization_timeout=120)
    import numpy as np
    from jax.experimental import multihost_utils

    import jmbs

    assert len(jax.local_devices()) == 1 and jax.process_count() == a.processes, jax.devices()
    model = jmbs.examples.parallelogram()
    f = jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0)
    rng = np.random.default_rng(0)
    n = a.designs
    d, h = rng.uniform(0.6, 1.5, n), rng.uniform(0.5, 2.0, n)
    designs = {"coupler.mass": rng.uniform(1.0, 4.0, n), "coupler.position": np.stack([d, h], 1)}
    for k in range(3):
        designs[f"crank{k}.position"] = np.stack([k * d, h / 2], 1)
        designs[f"O{k}.point"] = np.stack([k * d, 0 * d], 1)
        designs[f"B{k}.point"] = np.stack([k * d, h], 1)

    def sweep(p):
        m = model.with_params(p)
        dec = jmbs.solvability_decisions(m, m.q0, 0.0, "nullspace")
        r = jmbs.reactions(m, m.q0, m.v0, 0.0, formulation=f).reactions
        return {"rank": dec.rank, "unique": dec.unique, "margin": dec.margin,
                "forces": r.forces, "component_unique": r.component_unique}

    chunk = a.chunk * a.processes
    t = time.perf_counter()
    out = jmbs.batch_map(sweep, designs, chunk_size=chunk, progress=False)
    first = time.perf_counter() - t
    np.savez(a.out, **out)
    print("READY " + json.dumps({"first_call_s": first, "rank": np.bincount(out["rank"]).tolist(),
                                 "threads_allowed": len(os.sched_getaffinity(0))}), flush=True)
    for k, line in enumerate(sys.stdin):  # the driver asks for one timed call at a time
        if line.strip() != "run":
            break
        if a.processes > 1:
            multihost_utils.sync_global_devices(f"run {k}")
        t, c = time.perf_counter(), time.process_time()
        jmbs.batch_map(sweep, designs, chunk_size=chunk, progress=False)
        print(f"TIME {time.perf_counter() - t} {time.process_time() - c}", flush=True)


# ---------------------------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------------------------
class Process:
    """One worker process; its stdout lines arrive on a queue (so that a hang can time out)."""

    def __init__(self, a, processes, process_id, core, port, out):
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--processes", str(processes),
               "--process-id", str(process_id), "--port", str(port), "--designs", str(a.designs),
               "--chunk", str(a.chunk), "--out", out]
        if core is not None:
            cmd += ["--core", str(core)]
        env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES")}
        env["JAX_PLATFORMS"] = "cpu"
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1)
        self.lines: queue.Queue = queue.Queue()
        self.err: list[str] = []
        for args in ((self.proc.stdout, self.lines.put, True), (self.proc.stderr, self.err.append, False)):
            threading.Thread(target=self._pump, args=args, daemon=True).start()

    @staticmethod
    def _pump(stream, put, mark_end: bool):
        for line in stream:
            put(line)
        if mark_end:  # the worker closed its stdout: it ended
            put(None)

    def expect(self, prefix, timeout):
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"no {prefix.strip()} after {timeout:.0f} s (a hang?)") from None
            if line is None:
                raise RuntimeError("the worker failed:\n" + "".join(self.err)[-3000:])
            if line.startswith(prefix):
                return line[len(prefix):].strip()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
                self.proc.wait(60)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def same_bits(ref_path, path) -> bool:
    import numpy as np

    with np.load(ref_path) as a, np.load(path) as b:
        return sorted(a.files) == sorted(b.files) and all(
            a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and a[k].tobytes() == b[k].tobytes()
            for k in a.files)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="16384 designs, 3 rounds")
    ap.add_argument("--designs", type=int, default=None, help="designs per sweep (default 131072)")
    ap.add_argument("--chunk", type=int, default=4096, help="elements per device and call (default 4096)")
    ap.add_argument("--reps", type=int, default=None, help="timed rounds (default 5; quick 3)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per step before a hang is declared")
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--processes", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--process-id", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--core", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    a.designs = a.designs or (16384 if a.quick else 131072)
    a.reps = a.reps or (3 if a.quick else 5)
    if a.worker:
        return worker(a)
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        sys.exit(f"needs two CPUs to pin the processes to; this process may use {cores}")

    # label, [(core or None) per process]
    plan = [("1 process, 1 core", [cores[0]]), ("2 processes, 1 core each", cores[:2]),
            ("1 process, 2 cores", [None])]
    log(f"jmbs.batch_map, parallelogram design sweep: {a.designs} designs, {a.chunk} per device and "
        f"call, {a.reps} rounds; {os.cpu_count()} CPUs, python {platform.python_version()}")
    res = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                       "processor": platform.processor()},
           "designs": a.designs, "chunk_per_device": a.chunk, "reps": a.reps, "runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        groups = []
        try:
            log("\n[compile] every configuration makes one (compiling) call")
            for k, (label, pins) in enumerate(plan):
                port = free_port()
                procs = [Process(a, len(pins), i, core, port, os.path.join(tmp, f"run{k}-{i}.npz"))
                         for i, core in enumerate(pins)]
                ready = [json.loads(p.expect("READY ", a.timeout)) for p in procs]
                run = {"label": label, "processes": len(pins), "cores": pins, "walls": [], "others": [],
                       "first_call_s": max(r["first_call_s"] for r in ready), "rank": ready[0]["rank"]}
                log(f"    {label}: first call {run['first_call_s']:.1f} s; load {os.getloadavg()[0]:.1f}")
                groups.append((run, procs))
                res["runs"].append(run)
            log(f"\n[timing] {a.reps} rounds")
            loads = []
            for i in range(a.reps):
                loads.append(os.getloadavg()[0])
                for run, procs in groups:
                    t0 = cpu_ticks()
                    for p in procs:
                        p.proc.stdin.write("run\n")
                    times = [[float(x) for x in p.expect("TIME ", a.timeout).split()] for p in procs]
                    t1 = cpu_ticks()
                    tick = os.sysconf("SC_CLK_TCK")
                    all_cpus_s = max(t1[0] - t0[0], 1) / tick
                    busy_s, ours_s = (t1[1] - t0[1]) / tick, sum(c for _, c in times)
                    run["walls"].append(max(w for w, _ in times))
                    run["others"].append(max(0.0, busy_s - ours_s) / all_cpus_s)
                walls = ", ".join(f"{r['label']} {r['walls'][-1]:.3f} s" for r, _ in groups)
                log(f"    round {i + 1}: {walls}; load {loads[-1]:.1f}")
            res["load_average"] = loads
        finally:
            for _, procs in groups:
                for p in procs:
                    p.close()
        for k, (run, procs) in enumerate(groups):
            run["bit_equal_to_baseline"] = all(same_bits(os.path.join(tmp, "run0-0.npz"),
                                                         os.path.join(tmp, f"run{k}-{i}.npz"))
                                               for i in range(len(procs)))

    base = statistics.median(res["runs"][0]["walls"])
    log("\n" + "=" * 100)
    log(f"parallelogram design sweep, {a.designs} designs, {a.chunk} per device and call; median of "
        f"{a.reps} calls after a compiling call; {os.cpu_count()} CPUs")
    log(f"{'configuration':26s} {'median s':>9s} {'min s':>8s} {'designs/s':>10s} {'speed-up':>9s} "
        f"{'others':>7s} {'first s':>8s} {'results':>14s}")
    for run in res["runs"]:
        run["median_s"], run["min_s"] = statistics.median(run["walls"]), min(run["walls"])
        run["designs_per_s"] = a.designs / run["median_s"]
        run["speedup"] = base / run["median_s"]
        run["others_median"] = statistics.median(run["others"])
        log(f"{run['label']:26s} {run['median_s']:>9.3f} {run['min_s']:>8.3f} {run['designs_per_s']:>10.0f} "
            f"{run['speedup']:>9.2f} {100 * run['others_median']:>6.0f}% {run['first_call_s']:>8.1f} "
            f"{'bit-equal' if run['bit_equal_to_baseline'] else 'DIFFER':>14s}")
    log("speed-up: against '1 process, 1 core'; 'others': share of all CPUs' time that other "
        "processes used during the calls (median); 'results': every process's against the baseline's.")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(res, fh, indent=1)
        log(f"wrote {a.json}")
    if not all(run["bit_equal_to_baseline"] for run in res["runs"]):
        sys.exit("the results differ from the one-process baseline")


if __name__ == "__main__":
    main()
