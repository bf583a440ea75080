"""The size of jmbs's programs and the first call's compile time, in a fresh process:
`python benchmarks/program_size.py [MODEL] [--gradient]`.

Prints the JAX equations of one state's dynamics and reactions (`jmbs.reactions` with a
prepared formulation: the constraint terms, the solve and the reactions that the
integration and the saved states evaluate; sub-programs included) by the jmbs function
that wrote them, and the first `simulate(MODEL, 2.0)`'s seconds of XLA compilation,
tracing and lowering (`jax.monitoring`). With `--gradient`:
the first and second `jax.grad` of a block on a spring-damper's final position with
respect to the stiffness (0.5 s, PID 1e-10), the case of `tests/test_forces.py`.
"""

import collections
import sys
import time

import jax
import jax.extend.core as jcore
import jax.monitoring

EVENTS = {"xla": "/jax/core/compile/backend_compile_duration",
          "trace": "/jax/core/compile/jaxpr_trace_duration",
          "lower": "/jax/core/compile/jaxpr_to_mlir_module_duration"}
totals: collections.Counter = collections.Counter()
jax.monitoring.register_event_duration_secs_listener(lambda e, d, **k: totals.update({e: d}))

import diffrax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import jmbs  # noqa: E402


def count(jaxpr, counts) -> None:
    """Equations of `jaxpr` and its sub-programs by the innermost jmbs frame."""
    for eqn in jaxpr.eqns:
        frames = [f for f in (eqn.source_info.traceback.frames if eqn.source_info.traceback else [])
                  if "/jmbs/" in f.file_name]
        counts[f"{frames[0].file_name.split('/jmbs/')[-1]}:{frames[0].function_name}" if frames
               else "(diffrax, equinox, jax)"] += 1
        for p in eqn.params.values():
            for sub in p if isinstance(p, (list, tuple)) else [p]:
                if isinstance(sub, jcore.ClosedJaxpr):
                    count(sub.jaxpr, counts)
                elif isinstance(sub, jcore.Jaxpr):
                    count(sub, counts)


def times() -> str:
    return " ".join(f"{k} {totals[e]:.1f} s" for k, e in EVENTS.items())


def program(name: str) -> None:
    model = getattr(jmbs.examples, name)()
    start = time.perf_counter()
    jax.block_until_ready(jmbs.simulate(model, 2.0).q)
    print(f"{name}: first simulate {time.perf_counter() - start:.1f} s ({times()})")
    f = jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0)
    jaxpr = jax.make_jaxpr(lambda q, v: jmbs.reactions(model, q, v, 0.0, f))(model.q0, model.v0)
    counts: collections.Counter = collections.Counter()
    count(jaxpr.jaxpr, counts)
    print(f"one state's dynamics and reactions: {sum(counts.values())} equations")
    for where, n in counts.most_common(12):
        print(f"{n:7d} {where}")


def gradient() -> None:
    b = jmbs.ModelBuilder(dim=2)
    b.add_body("block", 2.0, 0.1, (1.0, 0.0))
    b.add_prismatic("P", "ground", "block", (1.0, 0.0), (1.0, 0.0))
    b.add_spring_damper("S", "ground", "block", (0.0, 0.0), (1.0, 0.0), stiffness=50.0,
                        damping=1.0, rest_length=0.8)
    model = b.build()
    f = jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0)

    def x_end(k):
        sol = jmbs.simulate(model.with_params({"S.stiffness": k}), 0.5, saveat=jnp.array([0.5]),
                            reactions=False, formulation=f,
                            stepsize_controller=diffrax.PIDController(rtol=1e-10, atol=1e-10))
        return sol.q[-1, 0]

    for call in ("first", "second"):
        start = time.perf_counter()
        jax.block_until_ready(jax.grad(x_end)(50.0))
        print(f"{call} gradient {time.perf_counter() - start:.2f} s ({times()})")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    gradient() if "--gradient" in sys.argv else program(args[0] if args else "bricard")
