"""`jmbs.batch_map`: chunks, padding, pytrees and errors in-process (one device); the
sharded path in a subprocess with four forced host devices."""

import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jmbs


def _fn(p):
    """A pytree in, a pytree out (nested, several dtypes)."""
    x, w = p["x"], p["w"]
    return {"y": jnp.sin(x) @ w, "outer": (jnp.outer(x, w), jnp.sum(x) > 0.0),
            "count": jnp.sum(x > 0.5)}


def _batch_of(n: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {"x": rng.uniform(-1.0, 1.0, (n, 3)), "w": rng.uniform(-1.0, 1.0, (n, 3))}


def _assert_trees_equal(a, b):
    assert jax.tree.structure(a) == jax.tree.structure(b)
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        assert isinstance(x, np.ndarray)
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_array_equal(x, np.asarray(y))


@pytest.mark.parametrize("n, chunk", [(23, 5), (5, 5), (3, 1024), (1, 1)])
def test_chunks_equal_a_plain_vmap(n, chunk):
    # 23 = 4 chunks of 5 + a last one of 3 padded to 5; 3 < chunk: one chunk of 3
    batch = _batch_of(n)
    _assert_trees_equal(jmbs.batch_map(_fn, batch, chunk_size=chunk, progress=False),
                        jax.vmap(_fn)(batch))


def test_one_compilation_serves_every_chunk_and_call():
    traces = []

    def fn(p):
        traces.append(1)  # runs once per trace
        return 2.0 * p

    xs = np.arange(10.0)
    for _ in range(2):
        np.testing.assert_array_equal(jmbs.batch_map(fn, xs, chunk_size=4, progress=False), 2.0 * xs)
    assert len(traces) == 1


def test_design_sweep_of_a_model():
    model = jmbs.examples.parallelogram()
    s = np.linspace(0.8, 1.3, 7)
    batch = {"O2.point": np.stack([2.0 * s, 0.0 * s], 1), "B2.point": np.stack([2.0 * s, 1.0 + 0 * s], 1),
             "crank2.position": np.stack([2.0 * s, 0.5 + 0 * s], 1), "coupler.mass": 2.0 * s}

    def fn(p):
        m = model.with_params(p)
        return jmbs.constraint_matrix(m, m.q0, 0.0), m.mass

    C, mass = jmbs.batch_map(fn, batch, chunk_size=3, devices=jax.devices()[:1], progress=False)
    C_ref, mass_ref = jax.vmap(fn)(batch)
    np.testing.assert_array_equal(C, C_ref)
    np.testing.assert_array_equal(mass, mass_ref)
    assert C.shape == (7, model.nc, model.nv)


def test_progress_bar(capsys):
    jmbs.batch_map(_fn, _batch_of(9), chunk_size=4, progress=True, desc="designs")
    err = capsys.readouterr().err
    assert "designs" in err and "9/9" in err
    jmbs.batch_map(_fn, _batch_of(9), chunk_size=4, progress=False)
    assert capsys.readouterr().err == ""


def test_errors_name_the_leaves():
    with pytest.raises(ValueError, match=r"\['w'\]: \(4, 3\)") as e:
        jmbs.batch_map(_fn, {"x": np.zeros((5, 3)), "w": np.zeros((4, 3))})
    assert "['x']: (5, 3)" in str(e.value)
    with pytest.raises(ValueError, match=r"\['w'\] is a scalar"):
        jmbs.batch_map(_fn, {"x": np.zeros((5, 3)), "w": 1.0})
    with pytest.raises(ValueError, match="empty"):
        jmbs.batch_map(_fn, {"x": np.zeros((0, 3)), "w": np.zeros((0, 3))})
    with pytest.raises(ValueError, match="no arrays"):
        jmbs.batch_map(_fn, {})
    with pytest.raises(ValueError, match="chunk_size"):
        jmbs.batch_map(_fn, _batch_of(3), chunk_size=0)
    with pytest.raises(ValueError, match="between 1 and"):
        jmbs.batch_map(_fn, _batch_of(3), devices=len(jax.devices()) + 1)
    with pytest.raises(ValueError, match="empty"):
        jmbs.batch_map(_fn, _batch_of(3), devices=[])
    with pytest.raises(ValueError, match="function"):
        jmbs.batch_map("fn", _batch_of(3))


# A design sweep of the redundant parallelogram (p = 1): 72 designs scaling the masses
# and moving the joints consistently (spacing d of the cranks, their length h), so every
# design is a parallelogram. Per design: the null-space decisions on the equilibrated C,
# then (after them) a consistent velocity and the reactions of the null-space projection
# prepared on the nominal model. 72 designs in chunks of 64 (16 per device): two chunks,
# the last padded. A regression test as well: with JAX 0.10, 16 per device was above the
# size from which the batched LAPACK kernels split their batch over XLA's CPU thread pool
# and blocked a pool thread waiting for the parts; four devices on two cores (a pool of
# four threads) then deadlocked in about half the runs. JAX 0.12 no longer blocks there,
# so this runs with XLA's default pool (no PJRT_NPROC).
SHARDED = textwrap.dedent("""
    import json, os, warnings
    import numpy as np
    import jmbs
    import jax, jax.numpy as jnp

    cache = os.environ.get("JMBS_TEST_CACHE", os.path.expanduser("~/.cache/jmbs-tests/jax"))
    if cache:
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    assert len(jax.devices()) == 4, jax.devices()

    model = jmbs.examples.parallelogram()
    f = jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0)
    sets = jnp.asarray(jmbs.element_sets(model))

    rng = np.random.default_rng(0)
    n = 72
    d, h = rng.uniform(0.6, 1.5, n), rng.uniform(0.5, 2.0, n)
    mc, mk = rng.uniform(0.5, 2.0, (n, 3)), rng.uniform(1.0, 4.0, n)
    designs = {"coupler.mass": mk, "coupler.inertia": mk * (2 * d) ** 2 / 12,
               "coupler.position": np.stack([d, h], 1)}
    for k in range(3):
        designs.update({f"crank{k}.mass": mc[:, k], f"crank{k}.inertia": mc[:, k] * h**2 / 12,
                        f"crank{k}.position": np.stack([k * d, h / 2], 1),
                        f"O{k}.point": np.stack([k * d, 0 * d], 1),
                        f"B{k}.point": np.stack([k * d, h], 1)})

    def sweep(p):
        m = model.with_params(p)
        q = m.q0
        dec = jmbs.NullSpace().decide(jmbs.equilibrate(m, jmbs.constraint_matrix(m, q, 0.0)), sets)
        dec, m = jax.lax.optimization_barrier((dec, m))
        v = jmbs.consistent_velocity(m, q, jnp.zeros(m.nv).at[2].set(1.0))
        r = jmbs.reactions(m, q, v, 0.0, formulation=f)
        return {"rank": dec.rank, "unique": dec.unique, "component_unique": dec.component_unique,
                "criterion": dec.criterion, "margin": dec.margin, "rank_margin": dec.rank_margin,
                "v": v, "v_dot": r.v_dot, "multipliers": r.reactions.multipliers,
                "forces": r.reactions.forces, "torques": r.reactions.torques,
                "reaction_unique": r.reactions.unique,
                "reaction_component_unique": r.reactions.component_unique}

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        one = jmbs.batch_map(sweep, designs, chunk_size=64, devices=1, progress=False)
        four = jmbs.batch_map(sweep, designs, chunk_size=64, progress=False)
    assert not [w for w in caught if "batch_map" in str(w.message)], [str(w.message) for w in caught]
    assert one.keys() == four.keys()
    worst = {}
    for key in one:
        a, b = one[key], four[key]
        assert a.shape == b.shape and a.shape[0] == n and a.dtype == b.dtype, key
        if a.dtype.kind in "biu":
            assert (a == b).all(), key
        else:
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(a).max()), err_msg=key)
            worst[key] = float(np.abs(a - b).max())
    assert (one["rank"] == 11).all()  # every design is a parallelogram: p = 1
    print(json.dumps({"worst": worst, "unique": int(one["component_unique"].sum())}))
""")


def test_sharded_sweep_equals_the_unsharded_one():
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip()
    env.pop("PJRT_NPROC", None)  # XLA's default pool: as many threads as cores (see above)
    try:
        out = subprocess.run([sys.executable, "-c", SHARDED], env=env, capture_output=True, text=True,
                             timeout=240)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the sharded sweep did not finish in {e.timeout} s (a deadlock?)")
    assert out.returncode == 0, out.stderr[-4000:]
    assert '"worst"' in out.stdout


# The other calls that deadlocked XLA's CPU pool with JAX 0.10 on two cores (docs/batch.md):
# repeated simulations that compute reactions at the saved states, and repeated jitted,
# vmapped reactions (batched SVD/QR/eigh/LU), in one process with XLA's default pool.
REPEATED = textwrap.dedent("""
    import os
    import jax, jax.numpy as jnp
    import jmbs

    cache = os.environ.get("JMBS_TEST_CACHE", os.path.expanduser("~/.cache/jmbs-tests/jax"))
    if cache:
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    model = jmbs.examples.parallelogram()
    v0 = jmbs.consistent_velocity(model, model.q0, jnp.zeros(model.nv).at[2].set(1.0))
    for k in range(4):
        t1 = 0.5 + 0.1 * k
        sol = jmbs.simulate(model, t1, saveat=jnp.linspace(0.0, t1, 33), v0=v0, reactions=True)
        assert bool(jnp.all(jnp.isfinite(sol.reactions.forces)))
    f = jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0)
    vs = v0[None] * jnp.linspace(0.5, 2.0, 64)[:, None]
    qs = jnp.broadcast_to(model.q0, (64, model.nq))
    fn = jax.jit(jax.vmap(lambda q, v: jmbs.reactions(model, q, v, 0.0, formulation=f).reactions.forces))
    for k in range(20):
        assert bool(jnp.all(jnp.isfinite(fn(qs, vs * (1 + k)))))
    print("done")
""")


def test_repeated_simulations_and_batched_reactions_do_not_hang():
    env = {k: v for k, v in os.environ.items() if k not in ("PJRT_NPROC", "XLA_FLAGS")}
    try:
        out = subprocess.run([sys.executable, "-c", REPEATED], env=env, capture_output=True, text=True,
                             timeout=240)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"repeated simulations and batched reactions did not finish in {e.timeout} s "
                    "(XLA's CPU thread pool deadlocked?)")
    assert out.returncode == 0, out.stderr[-4000:]
    assert out.stdout.strip().endswith("done")
