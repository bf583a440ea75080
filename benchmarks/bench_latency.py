"""Latency a user feels, in one fresh process: `import jmbs`, model builds, first calls.

Run each part in its own process (no persistent compilation cache), a few times:

    python benchmarks/bench_latency.py build   # import, redundant manipulator twice, one body
    python benchmarks/bench_latency.py sim     # import, Bricard: simulate and solvability twice

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
    else:
        raise SystemExit("usage: bench_latency.py build|sim")
    return {k: round(v, 2) for k, v in out.items()}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1] if len(sys.argv) > 1 else "build")))
