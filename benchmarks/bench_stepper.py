"""Fixed-step batched throughput: jmbs's `RegularizedEuler` (vmapped `jmbs.step`) against
MuJoCo (`mujoco.rollout`, threads), side by side.

    .venv/bin/python benchmarks/bench_stepper.py [--batches 1,64,4096] [--steps 100]
                                                 [--models bricard,a02] [--reps 3]
                                                 [--chunk C] [--mjx] [--json PATH]
    .venv/bin/python benchmarks/bench_stepper.py --trace DIR [--models M] [--batches B]
                                                 (jmbs's run of the first model and batch
                                                 under JAX's profiler: `_trace.py`)

Models, the same step h = 1e-2 s in both codes:

- **Bricard** (IFToMM A04, `jmbs.examples.bricard()`): in MuJoCo a chain of five
  hinged box rods (1 m, 1 kg, 0.1 m square section) from the ground, closed at J6 by two
  `connect` equalities on its axis (MuJoCo has no hinge equality): 6 closure rows for
  the jmbs J6's 5; jmbs: six revolutes, 30 rows, one redundant.
- **A02 chain** (N = 40, `jmbs.examples.n_four_bar(40)`): 41 cranks and 40 couplers,
  1 m and 1 kg each; in MuJoCo each coupler hangs from its crank by a hinge and is
  closed on the next crank by a `connect` (its z row is redundant in the plane); jmbs:
  planar, 243 velocities, 242 rows.

Instances vary a parameter: jmbs the constraints' compliance (every row compliant,
log-uniform in [1e-7, 1e-5]: an array leaf of `RegularizedEuler`, so one program serves
the batch), MuJoCo the equalities' `solref` time constant (uniform in [0.02, 0.05] s, one
`MjModel` per instance). Steps per second = instances x steps / wall time of the run
(median of `--reps` after a warm-up; jmbs's compile time is excluded and reported).
The violation is `max |Phi|` (jmbs) and `max |efc_pos|` of the equality rows (MuJoCo)
at the end of the run. Reactions on the redundant joints: the Bricard's closure after
1 s with two softness settings in each code; jmbs says which reactions are unique.

On the CPU jmbs gets one XLA device per MuJoCo thread (the batch sharded over them,
each device running its share in chunks). On a machine with a GPU, JAX runs the jmbs
side there (`jax.devices()` is printed; the whole batch in one vmap, `--chunk 0`) and
MuJoCo stays on the CPU threads; `--mjx` adds MJX (`mujoco-mjx`, when it installs beside
the project's JAX) on the same device as jmbs, twice: with MuJoCo's default solver
settings and with the fast ones MJX's documentation advises for throughput.
"""

import argparse
import copy
import json
import os
import statistics
import time

THREADS = os.cpu_count() or 1
# jmbs gets one CPU device per thread MuJoCo gets (docs/batch.md: a device per core),
# the batch sharded over them; set XLA_FLAGS yourself to choose otherwise.
if "device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                               + f" --xla_force_host_platform_device_count={THREADS}").strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from _trace import trace  # noqa: E402  (the scripts run from benchmarks/)

import jmbs  # noqa: E402

H = 1e-2


def mjcf_bricard() -> str:
    """The Bricard as MJCF: bodies at the origin (local = global in the reference)."""
    pts = [(0, 0, 0), (1, 0, 0), (1, -1, 0), (1, -1, 1), (0, -1, 1), (0, 0, 1)]
    axes = [(0, 1, 0), (0, 0, 1), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
    body = ""
    for k in reversed(range(5)):
        p, q, a = pts[k], pts[k + 1], axes[k]
        body = (f'<body name="rod{k + 1}"><joint name="J{k + 1}" pos="{_v(p)}" axis="{_v(a)}"/>'
                f'<geom fromto="{_v(p)} {_v(q)}" size="0.05" mass="1"/>{body}</body>')
    return f"""<mujoco model="bricard">
  <option timestep="{H}" gravity="0 -9.81 0"/>
  <default><geom type="box" contype="0" conaffinity="0"/><joint type="hinge"/></default>
  <worldbody>{body}</worldbody>
  <equality>
    <connect name="J6a" body1="rod5" body2="world" anchor="0 0 1"/>
    <connect name="J6b" body1="rod5" body2="world" anchor="0.5 0 1"/>
  </equality>
</mujoco>"""


def mjcf_chain(n: int) -> str:
    """IFToMM A02 as MJCF: slender 1 m, 1 kg rods (inertia 1/12 about z)."""
    bodies, eqs = [], []
    rod = "0.0833333333"  # m L^2 / 12
    for k in range(n + 1):
        coupler = ""
        if k < n:
            coupler = (f'<body name="coupler{k}"><joint name="B{k}L" pos="{k} 1 0"/>'
                       f'<inertial pos="{k + 0.5} 1 0" mass="1" diaginertia="1e-6 {rod} {rod}"/>'
                       "</body>")
            eqs.append(f'<connect name="B{k}R" body1="coupler{k}" body2="crank{k + 1}" '
                       f'anchor="{k + 1} 1 0"/>')
        bodies.append(f'<body name="crank{k}"><joint name="O{k}" pos="{k} 0 0"/>'
                      f'<inertial pos="{k} 0.5 0" mass="1" diaginertia="{rod} 1e-6 {rod}"/>'
                      f"{coupler}</body>")
    return f"""<mujoco model="a02">
  <option timestep="{H}" gravity="0 -9.81 0"/>
  <default><joint type="hinge" axis="0 0 1"/></default>
  <worldbody>{''.join(bodies)}</worldbody>
  <equality>{''.join(eqs)}</equality>
</mujoco>"""


def _v(x) -> str:
    return " ".join(f"{float(c):g}" for c in x)


def mujoco_setup(name: str):
    """`(MjModel, initial qvel)` of a model: at rest (Bricard), or A02's initial motion
    (every crank at -1 rad/s, couplers translating: +1 rad/s relative to their crank)."""
    import mujoco

    if name == "bricard":
        return mujoco.MjModel.from_xml_string(mjcf_bricard()), None
    mj = mujoco.MjModel.from_xml_string(mjcf_chain(40))
    qvel = np.array([-1.0 if mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j).startswith("O")
                     else 1.0 for j in range(mj.njnt)])
    return mj, qvel


def jmbs_model(name: str):
    return jmbs.examples.bricard() if name == "bricard" else jmbs.examples.n_four_bar(40)


def jmbs_run(model, batch: int, steps: int, chunk: int, seed: int = 0):
    """`(run, cs)`: the jitted run of `batch` instances, each with its own compliance `cs`,
    sharded over the devices, each device's share in chunks of `chunk` instances
    (`jax.lax.map(..., batch_size=chunk)`: on the CPU a vmapped step over thousands of
    instances runs slower per instance than over tens, its intermediate arrays leaving
    the caches; 0: the whole share); `run(cs)` gives each instance's final `max |Phi|`."""
    rng = np.random.default_rng(seed)
    cs = jnp.asarray(10.0 ** rng.uniform(-7, -5, batch))
    s0 = jmbs.StepState.initial(model)

    def one(c):
        solver = jmbs.RegularizedEuler(H, compliance=c)

        def body(s, _):
            return jmbs.step(model, s, solver=solver), None

        s = jax.lax.scan(body, s0, None, length=steps)[0]
        return jnp.max(jnp.abs(jmbs.phi(model, s.q, s.t)))

    devices = jax.devices()[:max(1, min(len(jax.devices()), batch))]
    per_device = -(-batch // len(devices))
    cs = jnp.concatenate([cs, jnp.repeat(cs[-1:], per_device * len(devices) - batch)])
    mesh = jax.sharding.Mesh(np.array(devices), ("b",))
    spec = jax.sharding.PartitionSpec("b")
    chunk = min(chunk, per_device) if chunk else per_device
    run = jax.jit(jax.shard_map(lambda c: jax.lax.map(one, c, batch_size=chunk),
                                mesh=mesh, in_specs=spec, out_specs=spec, check_vma=False))
    return run, cs


def bench_jmbs(model, batch: int, steps: int, reps: int, chunk: int, seed: int = 0) -> dict:
    """Steps per second of `jmbs_run`'s `batch` instances (median of `reps` after the
    first call, whose extra time is reported as the compile time)."""
    run, cs = jmbs_run(model, batch, steps, chunk, seed)
    start = time.perf_counter()
    viol = run(cs).block_until_ready()
    first = time.perf_counter() - start
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run(cs).block_until_ready()
        times.append(time.perf_counter() - start)
    t = statistics.median(times)
    return {"steps_per_s": batch * steps / t, "seconds": t, "compile_s": first - t,
            "max_violation": float(np.max(np.asarray(viol)))}


def bench_mujoco(name: str, batch: int, steps: int, reps: int, seed: int = 0) -> dict:
    import mujoco
    from mujoco import rollout

    mj, qvel = mujoco_setup(name)
    rng = np.random.default_rng(seed)
    models = []
    for tc in rng.uniform(0.02, 0.05, batch):
        m = copy.copy(mj)  # a deep copy, 5x faster than parsing the XML again
        m.eq_solref[:] = (tc, 1.0)
        models.append(m)
    data = mujoco.MjData(mj)
    if qvel is not None:
        data.qvel[:] = qvel
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty(mujoco.mj_stateSize(mj, spec))
    mujoco.mj_getState(mj, data, state, spec)
    init = np.tile(state, (batch, 1))
    datas = [mujoco.MjData(mj) for _ in range(THREADS)]
    out = rollout.rollout(models, datas, init, nstep=steps)[0]  # warm-up
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        out = rollout.rollout(models, datas, init, nstep=steps, persistent_pool=True)[0]
        times.append(time.perf_counter() - start)
    t = statistics.median(times)
    return {"steps_per_s": batch * steps / t, "seconds": t,
            "max_violation": _mujoco_violation(models, out[:, -1], spec)}


def bench_mjx(name: str, batch: int, steps: int, reps: int, fast: bool, seed: int = 0) -> dict:
    """MJX (`mjx.step` vmapped, on JAX's default device) over `batch` instances, each with its
    own `solref` time constant (a batched leaf of one `mjx.Model`). `fast`: the solver as
    MJX's documentation advises for throughput (`iterations=1`, `ls_iterations=4`), else
    MuJoCo's defaults as on the CPU. Float64, as jmbs (importing jmbs turns it on)."""
    import mujoco
    from mujoco import mjx

    mj, qvel = mujoco_setup(name)
    if fast:
        mj.opt.iterations, mj.opt.ls_iterations = 1, 4
    d = mujoco.MjData(mj)
    if qvel is not None:
        d.qvel[:] = qvel
    mx, dx0 = mjx.put_model(mj), mjx.put_data(mj, d)
    rng = np.random.default_rng(seed)
    tcs = rng.uniform(0.02, 0.05, batch)
    solref = jnp.asarray(np.broadcast_to(np.stack([tcs, np.ones(batch)], axis=1)[:, None, :],
                                         (batch, mj.neq, 2)))

    def one(sr):
        m = mx.tree_replace({"eq_solref": sr})
        dx = jax.lax.scan(lambda x, _: (mjx.step(m, x), None), dx0, None, length=steps)[0]
        return dx.qpos, dx.qvel

    run = jax.jit(jax.vmap(one))
    start = time.perf_counter()
    qpos, qv = jax.block_until_ready(run(solref))
    first = time.perf_counter() - start
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        jax.block_until_ready(run(solref))
        times.append(time.perf_counter() - start)
    t = statistics.median(times)
    worst = 0.0
    for k in range(min(batch, 16)):
        m = copy.copy(mj)
        m.eq_solref[:] = (tcs[k], 1.0)
        dk = mujoco.MjData(m)
        dk.qpos[:], dk.qvel[:] = np.asarray(qpos[k]), np.asarray(qv[k])
        worst = max(worst, _equality_violation(m, dk))
    return {"steps_per_s": batch * steps / t, "seconds": t, "compile_s": first - t,
            "max_violation": worst, "solver": "iterations 1, ls_iterations 4" if fast else "default"}


def _mujoco_violation(models, states, spec) -> float:
    import mujoco

    worst = 0.0
    for m, s in list(zip(models, states))[:16]:
        d = mujoco.MjData(m)
        mujoco.mj_setState(m, d, s, spec)
        worst = max(worst, _equality_violation(m, d))
    return worst


def _equality_violation(m, d) -> float:
    """`max |efc_pos|` of the equality rows at `d`'s state."""
    import mujoco

    mujoco.mj_forward(m, d)
    eq = d.efc_type[:d.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    return float(np.max(np.abs(d.efc_pos[:d.nefc][eq]), initial=0.0))


def bricard_reactions() -> dict:
    """The Bricard's closure after 1 s, with two softness settings in each code: jmbs
    J6's reaction force (and whether it is unique), MuJoCo's J6 connect forces."""
    import mujoco

    model = jmbs.examples.bricard()
    out = {"jmbs": {}, "mujoco": {}}
    for label, solver in (("compliance 1e-7", jmbs.RegularizedEuler(H, compliance=1e-7)),
                          ("compliance 1e-6", jmbs.RegularizedEuler(H, compliance=1e-6)),
                          ("rigid + projection", jmbs.RegularizedEuler(H, projection=True))):
        sol = jmbs.simulate(model, 1.0, solver=solver, saveat=[0.0, 1.0])
        out["jmbs"][label] = {"J6_force": np.asarray(sol.reactions.force("J6")[-1]).round(4).tolist(),
                              "unique": bool(sol.reactions.is_unique("J6")[-1])}
    for tc in (0.02, 0.05):
        mj, _ = mujoco_setup("bricard")
        mj.eq_solref[:] = (tc, 1.0)
        d = mujoco.MjData(mj)
        for _ in range(int(round(1.0 / H))):
            mujoco.mj_step(mj, d)
        eq = d.efc_type[:d.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
        f = d.efc_force[:d.nefc][eq].reshape(2, 3)  # two connects, constraint frame = world
        out["mujoco"][f"solref {tc:g}"] = {"J6a_force": f[0].round(4).tolist(),
                                          "J6b_force": f[1].round(4).tolist(),
                                          "J6_sum": f.sum(axis=0).round(4).tolist()}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", default="1,64,4096")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--models", default="bricard,a02")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--chunk", type=int, default=None, help="jmbs instances vmapped at once "
                    "(0: each device's whole share; default 64 on the CPU, 0 on an accelerator)")
    ap.add_argument("--mjx", action="store_true", help="also run MJX (mujoco-mjx installed beside "
                    "the project's JAX) on JAX's default device, with MuJoCo's default solver "
                    "settings and with the fast ones MJX's documentation advises")
    ap.add_argument("--max-seconds", type=float, default=120.0,
                    help="on the CPU, skip a batch whose jmbs runs would take longer, estimated "
                         "from the model's previous batch")
    ap.add_argument("--json", default=None)
    ap.add_argument("--trace", default=None, help="folder: trace one run of jmbs's instances "
                    "(the first model and batch) and print its costliest operations; nothing "
                    "else is run")
    args = ap.parse_args()
    if args.chunk is None:
        args.chunk = 64 if jax.default_backend() == "cpu" else 0
    print(f"devices: {jax.devices()}; MuJoCo threads: {THREADS}; h = {H}; jmbs chunk {args.chunk}")
    if args.trace:
        name, batch = args.models.split(",")[0], int(args.batches.split(",")[0])
        run, cs = jmbs_run(jmbs_model(name), batch, args.steps, args.chunk)
        run(cs).block_until_ready()
        trace(lambda: run(cs), args.trace, f"jmbs's {name}, {batch} instances x {args.steps} steps")
        return
    results = {"devices": str(jax.devices()), "threads": THREADS, "h": H, "runs": []}
    for name in args.models.split(","):
        model = jmbs_model(name)
        rate = None  # jmbs's steps per second at the previous batch
        for batch in map(int, args.batches.split(",")):
            steps = args.steps
            # (on an accelerator the time hardly grows with the batch: no estimate)
            if (rate and jax.default_backend() == "cpu"
                    and batch * steps * (args.reps + 1) / rate > args.max_seconds):
                print(f"{name:8s} batch {batch:5d}: skipped (jmbs would take about "
                      f"{batch * steps * (args.reps + 1) / rate:.0f} s > --max-seconds)", flush=True)
                continue
            jm = bench_jmbs(model, batch, steps, args.reps, args.chunk)
            rate = jm["steps_per_s"]
            mu = bench_mujoco(name, batch, steps, args.reps)
            row = {"model": name, "batch": batch, "steps": steps, "jmbs": jm, "mujoco": mu,
                   "ratio": jm["steps_per_s"] / mu["steps_per_s"]}
            if args.mjx:
                for fast in (False, True):
                    mx = row["mjx_fast" if fast else "mjx"] = bench_mjx(name, batch, steps, args.reps, fast)
                    row["ratio_" + ("mjx_fast" if fast else "mjx")] = jm["steps_per_s"] / mx["steps_per_s"]
                    print(f"{name:8s} batch {batch:5d}: MJX ({mx['solver']}) {mx['steps_per_s']:10.4g} "
                          f"steps/s (compile {mx['compile_s']:.1f} s, max|efc_pos| "
                          f"{mx['max_violation']:.1e}); jmbs/MJX {jm['steps_per_s'] / mx['steps_per_s']:.3g}",
                          flush=True)
            results["runs"].append(row)
            print(f"{name:8s} batch {batch:5d}: jmbs {jm['steps_per_s']:10.4g} steps/s "
                  f"(compile {jm['compile_s']:.1f} s, max|Phi| {jm['max_violation']:.1e}); MuJoCo "
                  f"{mu['steps_per_s']:10.4g} steps/s (max|efc_pos| {mu['max_violation']:.1e}); "
                  f"jmbs/MuJoCo {row['ratio']:.3g}", flush=True)
    if "bricard" in args.models:
        results["reactions"] = bricard_reactions()
        print(json.dumps(results["reactions"], indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
