"""Cost of a gradient through a simulation: the IFToMM A04 Bricard mechanism over 10 s.

    .venv/bin/python benchmarks/bench_sensitivity.py [--quick] [--reps N] [--t1 T] [--json PATH]

The functional is the RMS over 101 saved times of the force in joint J1,
`J(p) = sqrt(mean_t |F_J1(t)|^2)`, and the design parameters `p` are the five rod
masses and the principal inertias of rod 3 (8 numbers). Every reaction of the
Bricard is non-unique (p = 1 couples all six joints), so the benchmark opts in
with `allow_nonunique=True`: it measures cost, and the cost is the same for a
unique reaction.

For each variant, the forward run `J(p)` and the gradient `jax.grad(J)(p)` are
each jitted, run once to compile, then timed (median of `--reps` runs). The
ratio gradient / forward is the figure the issue asks for (target: at most 5).
The honest alternative, central finite differences, costs `2 x 8` forward runs: they
are timed (for `checkpoint`), one after another and as one vmapped call, and checked
against the gradient; `FD/grad` in the table is the arithmetic `2 x 8 x forward / gradient`.

Variants (all NullSpaceProjection, Tsit5, PIDController rtol = atol = 1e-8):
- `checkpoint`: `Projection()`, `diffrax.RecursiveCheckpointAdjoint()` (the default):
  jmbs's reverse pass stores the Runge-Kutta stages (`scan_kind="bounded"`);
- `recompute`: the same with `diffrax.Tsit5(scan_kind="checkpointed")`, diffrax's
  default stage loop, whose reverse pass recomputes every stage (jmbs before 2026-11-26);
- `backsolve`: `Baumgarte(10, 10)`, `diffrax.BacksolveAdjoint()` (the projection
  is not part of the continuous adjoint, see `jmbs.simulate`).
"""

import argparse
import json
import platform
import statistics
import time

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

import jmbs


def timed(fn, reps):
    """`(compile + first run, median of reps)` in seconds."""
    t0 = time.perf_counter()
    jax.block_until_ready(fn())
    first = time.perf_counter() - t0
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - t0)
    return first, statistics.median(times)


def finite_differences(fwd, x0, g, t_grad: float, reps: int) -> dict:
    """Central differences of `fwd` at `x0`, timed, not extrapolated: `2 n` compiled forward
    runs one after another, and the same `2 n` runs as one vmapped call (compiled once);
    each against the gradient `g` (relative step 1e-6)."""
    n = len(x0)
    h = 1e-6 * jnp.maximum(jnp.abs(x0), 1.0)
    X = jnp.concatenate([x0 + jnp.diag(h), x0 - jnp.diag(h)])
    batched = jax.jit(jax.vmap(fwd))

    def fd(values):
        return (values[:n] - values[n:]) / (2 * h)

    _, t_seq = timed(lambda: jnp.stack([fwd(x) for x in X]), reps)
    c_bat, t_bat = timed(lambda: batched(X), reps)
    err = float(jnp.max(jnp.abs(fd(batched(X)) - g)) / jnp.max(jnp.abs(g)))
    print(f"central differences ({2 * n} runs): sequential {t_seq:.3f} s, vmapped {t_bat:.3f} s "
          f"(first {c_bat:.1f} s); against the gradient: max rel diff {err:.1e}", flush=True)
    return {"fd_sequential_s": t_seq, "fd_vmapped_s": t_bat, "fd_vmapped_first_s": c_bat,
            "fd_sequential_over_gradient": t_seq / t_grad, "fd_vmapped_over_gradient": t_bat / t_grad,
            "fd_rel_diff": err}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 s of motion, 3 repetitions")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--t1", type=float, default=10.0)
    parser.add_argument("--json", type=str, default=None)
    parser.add_argument("--max-steps", type=int, default=None,
                        help="simulate's max_steps (default: simulate's own, 100000). Recursive "
                             "checkpointing keeps about sqrt(2 max_steps) checkpoints: 447 by "
                             "default, 90 with 4096 (the setting before 2026-11-26)")
    args = parser.parse_args()
    t1, reps = (2.0, 3) if args.quick else (args.t1, args.reps)
    max_steps = {} if args.max_steps is None else {"max_steps": args.max_steps}

    m0 = jmbs.examples.bricard()
    f = jmbs.NullSpaceProjection().prepare(m0, m0.q0, 0.0)
    names = [f"rod{k}.mass" for k in range(1, 6)]
    J3 = m0.params()["rod3.inertia"]
    x0 = jnp.concatenate([jnp.ones(5), J3])
    ts = jnp.linspace(0.0, t1, 101)
    variants = {
        "checkpoint": (jmbs.Projection(), diffrax.RecursiveCheckpointAdjoint(), diffrax.Tsit5()),
        "recompute": (jmbs.Projection(), diffrax.RecursiveCheckpointAdjoint(),
                      diffrax.Tsit5(scan_kind="checkpointed")),
        "backsolve": (jmbs.Baumgarte(10.0, 10.0), diffrax.BacksolveAdjoint(), diffrax.Tsit5()),
    }
    rows, results = [], {}
    for name, (stab, adjoint, solver) in variants.items():
        def J(x, stab=stab, adjoint=adjoint, solver=solver):
            m = m0.with_params({**dict(zip(names, x[:5])), "rod3.inertia": x[5:]})
            sol = jmbs.simulate(m, t1, formulation=f, stabilization=stab, saveat=ts,
                                adjoint=adjoint, solver=solver, **max_steps)
            F = sol.reactions.force("J1", allow_nonunique=True)
            return jnp.sqrt(jnp.mean(jnp.sum(F**2, axis=-1)))

        fwd, grad = jax.jit(J), jax.jit(jax.grad(J))
        c_fwd, t_fwd = timed(lambda fwd=fwd: fwd(x0), reps)
        c_grad, t_grad = timed(lambda grad=grad: grad(x0), reps)
        g = np.asarray(grad(x0))
        results[name] = {"forward_s": t_fwd, "gradient_s": t_grad, "ratio": t_grad / t_fwd,
                         "fd_over_gradient": 2 * len(x0) * t_fwd / t_grad,
                         "first_forward_s": c_fwd, "first_gradient_s": c_grad,
                         "J": float(fwd(x0)), "gradient": g.tolist()}
        rows.append((name, t_fwd, t_grad, t_grad / t_fwd, 2 * len(x0) * t_fwd / t_grad, c_fwd, c_grad))
        print(f"{name}: forward {t_fwd:.3f} s, gradient {t_grad:.3f} s", flush=True)
        if name == "checkpoint":
            results[name] |= finite_differences(fwd, x0, g, t_grad, reps)

    print(f"\nBricard {t1:g} s, {len(x0)} design parameters, median of {reps} "
          f"({platform.processor() or platform.machine()}, {jax.devices()[0].platform})")
    head = ("variant", "forward s", "gradient s", "grad/fwd", "FD/grad", "1st fwd s", "1st grad s")
    print("  ".join(f"{h:>11}" for h in head))
    for r in rows:
        print(f"{r[0]:>11}" + "".join(f"  {x:>11.3f}" for x in r[1:]))
    a = np.asarray(results["checkpoint"]["gradient"])
    for other, why in (("recompute", "stages recomputed"), ("backsolve", "different stabilization")):
        b = np.asarray(results[other]["gradient"])
        print(f"checkpoint vs {other} gradients ({why}): max rel diff "
              f"{np.max(np.abs(a - b)) / np.max(np.abs(a)):.2e}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"t1": t1, "reps": reps, "results": results}, fh, indent=1)


if __name__ == "__main__":
    main()
