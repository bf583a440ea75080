"""Latency a user feels, in one fresh process: `import jmbs`, model builds, first calls.

Run each part in its own process (no persistent compilation cache), a few times:

    python benchmarks/bench_latency.py build   # import, redundant manipulator twice, one body
    python benchmarks/bench_latency.py sim     # import, Bricard: simulate and solvability twice
    python benchmarks/bench_latency.py sim5 [--cache DIR]  # first and second simulate(bricard(), 5.0)
    python benchmarks/bench_latency.py builds  # every bundled model's build, each in a new process
    python benchmarks/bench_latency.py ops     # the Bricard's constraint terms: HLO operations,
                                               # compile, per evaluation

`sim5 --cache DIR` turns on `jmbs.enable_compilation_cache(DIR)` first: run it twice with
a new directory for the cold and the warm (second-process) figures.

Prints one JSON line of seconds. Figures: docs/benchmarks.md, "Import, build and
first-call latency".
"""

import json
import sys
import time

t0 = time.perf_counter()
import jmbs  # noqa: E402

T_IMPORT = time.perf_counter() - t0
import jax  # noqa: E402


def timed(out: dict, label: str, fn):
    """Run `fn()`, wait for its arrays, record the seconds under `label`."""
    t = time.perf_counter()
    result = fn()
    jax.block_until_ready(jax.tree.leaves(result))
    out[label] = time.perf_counter() - t
    return result


def one_body():
    b = jmbs.ModelBuilder(dim=2, gravity=(0, -9.81))
    b.add_body("a", mass=1.0, inertia=1.0, position=(0.3, 0.1))
    b.add_revolute("O", b.ground, "a", point=(0.0, 0.0))
    return b.build().q0


def main(what: str) -> dict:
    """The seconds of one part (see the module docstring)."""
    out = {"import": T_IMPORT}
    if what == "build":
        timed(out, "manipulator_build_first", lambda: jmbs.examples.redundant_manipulator().q0)
        timed(out, "manipulator_build_second", lambda: jmbs.examples.redundant_manipulator().q0)
        timed(out, "one_body_build", one_body)
    elif what == "sim":
        m = jmbs.examples.bricard()
        timed(out, "bricard_build", lambda: jmbs.examples.bricard().q0)
        timed(out, "bricard_simulate_first", lambda: jmbs.simulate(m, 1.0).q)
        timed(out, "bricard_simulate_second", lambda: jmbs.simulate(m, 1.0).q)
        timed(out, "solvability_first", lambda: jmbs.solvability(m).rank)
        timed(out, "solvability_second", lambda: jmbs.solvability(m).rank)
    elif what == "sim5":
        m = timed(out, "bricard_build", jmbs.examples.bricard)
        timed(out, "bricard_simulate_5s_first", lambda: jmbs.simulate(m, 5.0).q)
        timed(out, "bricard_simulate_5s_second", lambda: jmbs.simulate(m, 5.0).q)
    elif what == "build-one":
        timed(out, "build", lambda: jmbs.examples.ALL[sys.argv[2]]().q0)
    elif what == "builds":
        return builds()
    elif what == "ops":
        return ops()
    else:
        raise SystemExit("usage: bench_latency.py build|sim|sim5 [--cache DIR]|builds|ops")
    return {k: round(v, 2) for k, v in out.items()}


def builds() -> dict:
    """Each bundled model's first build in a new process (import apart); the slowest."""
    import subprocess

    out = {}
    for name in sorted(jmbs.examples.ALL):
        res = subprocess.run([sys.executable, __file__, "build-one", name], check=True,
                             capture_output=True, text=True)
        out[name] = json.loads(res.stdout.strip().splitlines()[-1])["build"]
    slowest = max(out, key=out.get)
    return {"builds": out, "slowest": slowest, "slowest_s": out[slowest]}


def ops() -> dict:
    """`jax.jit(constraint_terms)` of the Bricard at a random state: operations in its
    HLO text (lines with an `=`), compile seconds, median of 200 evaluations."""
    import numpy as np

    m = jmbs.examples.bricard()
    rng = np.random.default_rng(0)
    q = jmbs.assemble(m, m.q0, 0.0)
    v = jmbs.consistent_velocity(m, q, rng.standard_normal(m.nv))
    fn = jax.jit(lambda q, v: jmbs.constraint_terms(m, q, v, 0.0))
    lowered = fn.lower(q, v)
    n_ops = sum(1 for line in lowered.as_text(dialect="hlo").splitlines() if " = " in line)
    t = time.perf_counter()
    compiled = lowered.compile()
    compile_s = time.perf_counter() - t
    jax.block_until_ready(compiled(q, v))
    runs = []
    for _ in range(200):
        t = time.perf_counter()
        jax.block_until_ready(compiled(q, v))
        runs.append(time.perf_counter() - t)
    return {"hlo_operations": n_ops, "compile_s": round(compile_s, 3),
            "evaluation_us": round(1e6 * float(np.median(runs)), 1)}


if __name__ == "__main__":
    if "--cache" in sys.argv:
        jmbs.enable_compilation_cache(sys.argv[sys.argv.index("--cache") + 1])
    print(json.dumps(main(sys.argv[1] if len(sys.argv) > 1 else "build")))
