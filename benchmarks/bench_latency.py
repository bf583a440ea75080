"""Latency a user feels, in one fresh process: `import jmbs`, model builds, first calls.

Run each part in its own process (no persistent compilation cache), a few times:

    python benchmarks/bench_latency.py build   # import, redundant manipulator twice, one body
    python benchmarks/bench_latency.py sim     # import, Bricard: simulate and solvability twice
    python benchmarks/bench_latency.py sim5 [--cache DIR]  # first and second simulate(bricard(), 5.0)
    python benchmarks/bench_latency.py host [CASE]  # import, build (default the Bricard), then
                                               # first and second printed solvability report
                                               # (generic rank included), reactions at q0,
                                               # assembly from q0 + 1e-3, in that order
    python benchmarks/bench_latency.py programs [CASE] [--grad]  # a first simulate's
                                               # (--grad: first gradient's) programs
                                               # (default the Bricard, 5 s):
                                               # tracing, lowering, XLA seconds of each
    python benchmarks/bench_latency.py builds  # every bundled model's build, each in a new process
    python benchmarks/bench_latency.py ops     # the Bricard's constraint terms: HLO operations,
                                               # compile, per evaluation
    python benchmarks/bench_latency.py ratio [REPS] [--json PATH]  # first simulate and first
                                               # gradient as a ratio to a bare diffrax
                                               # solve (issue 31)
    python benchmarks/bench_latency.py case-sim NAME   # one case of `ratio` in this process:
    python benchmarks/bench_latency.py case-grad NAME  # its first simulate / first gradient
    python benchmarks/bench_latency.py linearizations [CASE]  # where the first gradient's
                                               # tracing goes (default the spatial case)
    python benchmarks/bench_latency.py tiers EXAMPLE [N]  # jmbs.examples.EXAMPLE(N): first
                                               # solvability report and reactions, the
                                               # median of 5 repeats (on the host), and
                                               # loops of 100 calls (host, then compiled)
    python benchmarks/bench_latency.py advise EXAMPLE  # import + build, first jmbs.advise
    python benchmarks/bench_latency.py report N METHOD  # n_four_bar(N): three solvability
                                               # reports with METHOD (dca, nullspace, ...)
    python benchmarks/bench_latency.py calls CASE [N]  # the first N (10) simulate calls of
                                               # a `ratio` case, each, in one process
    python benchmarks/bench_latency.py tree [CASE] [BATCH]  # one dynamics evaluation with
                                               # the tree's solve (default the A02 chain)
                                               # and BATCH (256) of them vmapped:
                                               # compile and run seconds

`ratio`: for the Bricard, the A02 chain (N = 40), Andrews' squeezer and a spatial model
with force elements, the fresh-process seconds of import + build + first `simulate` (and
of the first jitted `jax.grad` through it), divided by the fresh-process seconds of a bare
diffrax solve (and gradient) of a linear ODE with as many states, the same solver
(Tsit5), controller (PID 1e-8) and 101 save times: the integrator's own cost on this
machine. Medians of REPS (default 3) processes each. jmbs's bytecode is read as an install
from a wheel would have it: run `make bytecode` first where `PYTHONDONTWRITEBYTECODE` is set
(`make bench` does), else every process compiles jmbs's sources again (about 0.1 s).

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
import jax.numpy as jnp  # noqa: E402


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
    elif what == "host":  # what a notebook asks first: the whole report, nearby samples too
        m = timed(out, "build", CASES[sys.argv[2] if len(sys.argv) > 2 else "bricard"][0])
        for label, call in (("report", lambda: str(jmbs.solvability(m))),
                            ("reactions", lambda: jmbs.reactions(m, m.q0, m.v0)),
                            ("assemble", lambda: jmbs.assemble(m, m.q0 + 1e-3))):
            timed(out, f"{label}_first", call)
            timed(out, f"{label}_second", call)
    elif what == "programs":
        return programs(sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] in CASES else "bricard")
    elif what == "build-one":
        timed(out, "build", lambda: jmbs.examples.ALL[sys.argv[2]]().q0)
    elif what == "builds":
        return builds()
    elif what == "ratio":
        return ratio(int(sys.argv[2]) if len(sys.argv) > 2 else 3)
    elif what in ("case-sim", "case-grad"):
        return case(sys.argv[2], what == "case-grad")
    elif what == "ops":
        return ops()
    elif what == "linearizations":
        return linearizations(sys.argv[2] if len(sys.argv) > 2 else "spatial_forces")
    elif what == "advise":
        m = timed(out, "import_build", getattr(jmbs.examples, sys.argv[2]))
        out["import_build"] += T_IMPORT
        timed(out, "advise_first", lambda: jmbs.advise(m).message)
    elif what == "report":
        m = timed(out, "import_build", lambda: jmbs.examples.n_four_bar(int(sys.argv[2])))
        out["import_build"] += T_IMPORT
        for k in range(3):
            timed(out, f"report_{k}", lambda: jmbs.solvability(m, method=sys.argv[3]).rank)
    elif what == "tiers":
        return tiers(sys.argv[2], *[int(a) for a in sys.argv[3:]])
    elif what == "calls":
        return calls(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 10)
    elif what == "tree":
        return tree(sys.argv[2] if len(sys.argv) > 2 else "a02_n40",
                    int(sys.argv[3]) if len(sys.argv) > 3 else 256)
    else:
        raise SystemExit("usage: bench_latency.py build|sim|sim5 [--cache DIR]|host [CASE]|programs|"
                         "builds|ops|ratio [REPS]")
    return {k: round(v, 2) for k, v in out.items()}


def tiers(example: str, *args) -> dict:
    """The host's tier and the compiled one (`jmbs.internal.host_or_compiled`): after the
    build, a solvability report's and the reactions' first call, the median of 5 repeats,
    then 100 calls of each (times 0.01 k for the reactions), in seconds."""
    out: dict = {}
    m = timed(out, "import_build", lambda: getattr(jmbs.examples, example)(*args))
    out["import_build"] += T_IMPORT
    entries = {"solvability": lambda k: jmbs.solvability(m).rank,
             "reactions": lambda k: jmbs.reactions(m, m.q0, m.v0, 0.01 * k)}
    for label, call in entries.items():
        timed(out, f"{label}_first", lambda: call(0))
        repeats = []
        for _ in range(5):
            timed(out, "repeat", lambda: call(0))
            repeats.append(out.pop("repeat"))
        out[f"{label}_repeat_ms"] = 1e3 * sorted(repeats)[2]
    for label, call in entries.items():
        timed(out, f"{label}_loop_100", lambda: [call(k) for k in range(100)])
    return {k: round(v, 3) for k, v in out.items()}


def calls(name: str, n: int) -> dict:
    """A notebook's first `n` `simulate` calls of one of the `ratio` cases, each second
    (the saved states on the host until their budget is spent, then compiled)."""
    build, t1, _ = CASES[name]
    model = build()
    seconds = []
    for _ in range(n):
        t = time.perf_counter()
        jax.block_until_ready(jmbs.simulate(model, t1).q)
        seconds.append(round(time.perf_counter() - t, 3))
    return {"import": round(T_IMPORT, 2), "calls": seconds, "total": round(sum(seconds), 2)}


def tree(name: str, batch: int, reps: int = 7) -> dict:
    """The accelerations at the case's reference configuration with
    `jmbs.DivideAndConquer` (prepared there; `jmbs.reactions`, jitted), one state and
    `batch` states vmapped (random consistent velocities): the seconds to compile each
    and the median of `reps` timed calls of 20 runs each. Run it with another commit's
    library first on the path (`PYTHONPATH=<its worktree>`) to compare the two."""
    import statistics

    import numpy as np

    m = CASES[name][0]()
    prepared = jmbs.DivideAndConquer().prepare(m, m.q0, 0.0)
    rng = np.random.default_rng(0)
    vs = jnp.stack([jmbs.consistent_velocity(m, m.q0, rng.normal(size=m.nv), 0.0)
                    for _ in range(batch)])
    one = lambda v: jmbs.reactions(m, m.q0, v, 0.0, prepared).v_dot  # noqa: E731
    out = {"library": jmbs.__file__}
    for label, f, arg in (("one", one, vs[0]), (f"batch_{batch}", jax.vmap(one), vs)):
        t = time.perf_counter()
        compiled = jax.jit(f).lower(arg).compile()
        out[f"{label}_compile_s"] = time.perf_counter() - t
        jax.block_until_ready(compiled(arg))
        runs = []
        for _ in range(reps):
            t = time.perf_counter()
            for _ in range(20):
                res = compiled(arg)
            jax.block_until_ready(res)
            runs.append((time.perf_counter() - t) / 20)
        out[f"{label}_run_ms"] = 1e3 * statistics.median(runs)
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}


def programs(name: str = "bricard") -> dict:
    """Build and first `simulate` (`--grad`: first gradient, as `case-grad`) of one of the
    `ratio` cases (default the Bricard, 5 s): per compiled program (JAX's compile log),
    the seconds of tracing, lowering to MLIR and XLA compilation. Programs compiled in a
    thread (the saved states') overlap the integration's: their seconds add to the
    table, not to the wall time."""
    import logging
    import re

    seconds: dict = {}
    pattern = re.compile(r"Finished (tracing|jaxpr to MLIR module conversion|XLA compilation) "
                         r"(?:of )?(?:jit\()?([^ )]+)\)? .*in ([0-9.]+) sec")

    class Log(logging.Handler):
        def emit(self, record):
            found = pattern.match(record.getMessage())
            if found:
                stage, name, sec = found.groups()
                stage = {"tracing": "trace", "XLA compilation": "xla"}.get(stage, "lower")
                seconds.setdefault(name, {"trace": 0.0, "lower": 0.0, "xla": 0.0})[stage] += float(sec)

    logging.getLogger("jax").addHandler(Log())
    logging.getLogger("jax").setLevel(logging.WARNING)
    jax.config.update("jax_log_compiles", True)
    out = {"import": T_IMPORT}
    build, t1, param = CASES[name]
    m = timed(out, f"{name}_build", build)
    if "--grad" in sys.argv:  # the first gradient of `case-grad NAME` instead
        timed(out, f"{name}_gradient_first", lambda: first_gradient(m, t1, param))
    else:
        timed(out, f"{name}_simulate_{t1:g}s_first", lambda: jmbs.simulate(m, t1).q)
    out = {k: round(v, 2) for k, v in out.items()}
    out["programs"] = {name: {k: round(v, 2) for k, v in s.items()}
                       for name, s in sorted(seconds.items(), key=lambda x: -sum(x[1].values()))
                       if sum(s.values()) >= 0.05}
    return out


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


def spatial_with_forces():
    """A spatial double pendulum (revolute, then spherical) on a torsion spring-damper,
    a point spring-damper and a bushing: force elements of three kinds in 3-D."""
    b = jmbs.ModelBuilder(dim=3, gravity=(0.0, -9.81, 0.0))
    upper = b.add_body("upper", mass=1.0, inertia=(0.01, 0.08, 0.08), position=(0.5, 0.0, 0.0))
    lower = b.add_body("lower", mass=1.0, inertia=(0.01, 0.08, 0.08), position=(1.5, 0.0, 0.0),
                       angular_velocity=(0.0, 1.0, 0.5))
    b.add_revolute("O", b.ground, upper, point=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    b.add_spherical("A", upper, lower, point=(1.0, 0.0, 0.0))
    b.add_rotational_spring_damper("torsion", "O", stiffness=20.0, damping=0.5)
    b.add_spring_damper("spring", b.ground, lower, point_i=(2.0, 1.0, 0.0), point_j=(2.0, 0.0, 0.0),
                        stiffness=50.0, damping=1.0)
    b.add_bushing("bushing", b.ground, lower, point=(2.0, 0.0, 0.0), stiffness=5.0, damping=0.1)
    return b.build()


# (model, end time, the parameter the first gradient is taken with respect to)
CASES = {
    "bricard": (lambda: jmbs.examples.bricard(), 5.0, "rod1.mass"),
    "a02_n40": (lambda: jmbs.examples.n_four_bar(40), 1.0, "gravity"),
    "andrews": (lambda: jmbs.examples.andrews_squeezer(), 0.03, "gravity"),
    "spatial_forces": (spatial_with_forces, 2.0, "spring.stiffness"),
}


def case(name: str, gradient: bool) -> dict:
    """In this fresh process: import + build + first simulate (or first gradient of the
    final positions' sum with respect to the case's parameter), from the process start."""
    build, t1, param = CASES[name]
    model = build()
    if gradient:
        first_gradient(model, t1, param)
    else:
        jax.block_until_ready(jmbs.simulate(model, t1).q)
    return {"total": time.perf_counter() - t0, "states": model.nq + model.nv, "t1": t1}


BARE = """
import sys, time
t0 = time.perf_counter()
import diffrax, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
n, t1, gradient = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3] == "1"
A = -0.1 * jnp.eye(n) + jnp.diag(jnp.ones(n - 1), 1) - jnp.diag(jnp.ones(n - 1), -1)
def solve(a, saveat):
    return diffrax.diffeqsolve(
        diffrax.ODETerm(lambda t, y, args: args * (A @ y)), diffrax.Tsit5(), 0.0, t1, None,
        jnp.ones(n), args=a, saveat=diffrax.SaveAt(ts=saveat),
        stepsize_controller=diffrax.PIDController(rtol=1e-8, atol=1e-8)).ys
if gradient:
    out = jax.jit(jax.grad(lambda a: jnp.sum(solve(a, jnp.array([t1]))[-1])))(1.0)
else:
    out = solve(1.0, jnp.linspace(0.0, t1, 101))
jax.block_until_ready(out)
print(time.perf_counter() - t0)
"""


def ratio(reps: int) -> dict:
    """Per case, medians over `reps` fresh processes: jmbs's first simulate and first
    gradient, the bare diffrax solve and gradient of the same size, and their ratios
    (targets: 3 and 5)."""
    import statistics
    import subprocess

    def median(cmd):
        runs = [float(subprocess.run(cmd, check=True, capture_output=True, text=True)
                      .stdout.strip().splitlines()[-1]) for _ in range(reps)]
        return statistics.median(runs)

    out = {}
    for name in CASES:
        row = {}
        for kind, case_cmd, flag in (("simulate", "case-sim", "0"), ("gradient", "case-grad", "1")):
            cmd = [sys.executable, __file__, case_cmd, name]
            runs = [json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True)
                               .stdout.strip().splitlines()[-1]) for _ in range(reps)]
            jm = statistics.median(r["total"] for r in runs)
            bare = median([sys.executable, "-c", BARE, str(runs[0]["states"]), str(runs[0]["t1"]), flag])
            row[kind] = {"jmbs_s": round(jm, 2), "bare_diffrax_s": round(bare, 2),
                         "ratio": round(jm / bare, 2)}
        out[name] = row
        print(name, json.dumps(row), file=sys.stderr, flush=True)
    return out


def final_gradient(model, t1: float, param: str):
    """`(jax.grad of the final positions' sum with respect to param, through simulate to
    t1; param's value)`, the formulation prepared on the concrete model as
    docs/sensitivity.md says."""
    f = jmbs.default_formulation(model).prepare(model, model.q0, 0.0)

    def final(p):
        m = model.with_params({param: p})
        return jnp.sum(jmbs.simulate(m, t1, formulation=f, saveat=[t1]).q[-1])
    return jax.grad(final), jnp.asarray(model.params()[param], float)


def first_gradient(model, t1: float, param: str):
    """`final_gradient`'s first call, jitted (`--eager`: `jax.grad` alone, the figures
    before 2026-11-27)."""
    grad, x = final_gradient(model, t1, param)
    return jax.block_until_ready((grad if "--eager" in sys.argv else jax.jit(grad))(x))


def linearizations(name: str) -> dict:
    """Trace (not compile) the first gradient of `case-grad NAME` and time JAX's
    linearizations of the integration step (`_step`) and of the vector field, by the pass
    that asks for them: equinox's checkpointed loop finds the perturbed values by
    linearizing the loop's body to a fixed point (`_resolve_perturb_val`), then the
    symbolic-zero cotangents by a VJP to a fixed point (`_resolve_symbolic_zeros`), then
    takes the VJP its backward loop runs (`_body_fun`). JAX caches a linearization per
    jaxpr, set of nonzero tangents and mode (linearize or VJP); a repeat costs nothing.
    Reads JAX internals (`ad._linearize_jaxpr`): a diagnostic, tied to JAX 0.12."""
    import traceback
    from collections import defaultdict

    from jax._src.interpreters import ad

    build, t1, param = CASES[name]
    model = build()
    passes = ("_resolve_perturb_val", "_resolve_symbolic_zeros", "_body_fun")
    seconds: dict = defaultdict(lambda: [0, 0.0])
    plain = ad._linearize_jaxpr

    def timed_linearize(jaxpr, nonzeros, instantiate, allow_fwds, is_vjp):
        t = time.perf_counter()
        out = plain(jaxpr, nonzeros, instantiate, allow_fwds, is_vjp)
        dt = time.perf_counter() - t
        fn = jaxpr.debug_info.func_name if jaxpr.debug_info else ""
        if dt > 0.01 and fn.split(" ")[0] in ("_step", "vector_field"):
            names = [fr.name for fr in traceback.extract_stack()]
            by = next((p for p in passes if p in names), "other")
            row = seconds[f"{fn.split(' ')[0]} / {by} / {'vjp' if is_vjp else 'linearize'}"]
            row[0] += 1
            row[1] += dt
        return out

    grad, x = final_gradient(model, t1, param)
    ad._linearize_jaxpr = timed_linearize
    try:
        t = time.perf_counter()
        jax.jit(grad).trace(x)
        total = time.perf_counter() - t
    finally:
        ad._linearize_jaxpr = plain
    return {"case": name, "trace_s": round(total, 2),
            "linearizations": {k: {"count": n, "s": round(s, 2)} for k, (n, s) in seconds.items()}}


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
    result = main(sys.argv[1] if len(sys.argv) > 1 else "build")
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump(result, f, indent=1)
    print(json.dumps(result))
