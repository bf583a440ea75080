"""Programs that run once, evaluated with NumPy on the host (`jmbs.internal.host_or_compiled`):
every operation against XLA's own evaluation of the same function, and the fallback to
a compiled program."""

import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jmbs
from jmbs.internal import HOST_USES, host_evaluation, host_or_compiled

RNG = np.random.default_rng(7)
A = RNG.normal(size=(4, 5, 3))
SPD = np.einsum("bij,bkj->bik", A, A) + 0.1 * np.eye(5)


def scatter_modes(x):
    idx = jnp.array([0, 2, 7, -1, 2])  # 7 is out of bounds; -1 counts from the end
    dropped = x.at[0, idx].add(1.0)  # out-of-bounds updates dropped (XLA's default)
    clipped = x.at[1, idx].set(5.0, mode="clip")
    return dropped, clipped, x.at[:, 1].multiply(x[:, 2]), x.at[2, :2].max(0.3)


def gathers(x):
    rows = jnp.array([[3, 0], [1, 1]])
    batched = jax.vmap(lambda m, i: m[i])(x, jnp.array([2, 0, 1, 4]))  # operand batching
    # rows along one or more axes, the rest whole (one fancy index on the host): int32
    # indices, out-of-bounds ones clipped, a fill mode within bounds
    taken = (x[:, jnp.array([4, 0, 0])], x[jnp.array([0, 2], dtype=jnp.int32)],
             jnp.take(x, jnp.array([[7, -9], [1, 0]]), axis=2, mode="clip"),
             x.at[:, jnp.array([1, 2])].get(mode="fill", fill_value=0.5))
    return x[rows], x[:, ::2], batched, x[jnp.array([1, 3]), jnp.array([2, 0])], taken


def scans(x):
    def body(carry, row):
        total, prod = carry
        return (total + row.sum(), prod * row[0]), (total * row, prod)

    forward = jax.lax.scan(body, (0.0, 1.0), x[0])
    backward = jax.lax.scan(body, (1.0, 2.0), x[1], reverse=True)
    count, value = jax.lax.while_loop(lambda c: c[1] < 50.0, lambda c: (c[0] + 1, c[1] * 1.7 + x[0, 0, 0]),
                                      (0, 1.0))
    # vmapped, the loop's predicate is the batch's: each member stops at its own count
    counts, values = jax.vmap(lambda a: jax.lax.while_loop(
        lambda c: c[1] < 50.0, lambda c: (c[0] + 1, c[1] * 1.7 + jnp.abs(a)), (0, 1.0 + a)))(x[0, :, 0])
    return (forward, backward, count, value, jax.lax.cond(x[0, 0, 0] > 0, jnp.sin, jnp.cos, x[2]),
            counts, values)


def decompositions(x):
    s = jnp.linalg.svd(x, compute_uv=False)
    u, s2, vt = jnp.linalg.svd(x, full_matrices=False)
    q, r = jnp.linalg.qr(x)
    w, v = jnp.linalg.eigh(SPD)
    chol = jnp.linalg.cholesky(SPD)
    qp, rp, p = jax.lax.linalg.qr(x, pivoting=True, full_matrices=False)
    # Sign-free forms: the factors' products and magnitudes.
    return (s, s2, jnp.einsum("bij,bj,bjk->bik", u, s2, vt), jnp.abs(vt), q @ r, jnp.abs(r), w,
            jnp.einsum("bij,bj,bkj->bik", v, w, v), chol, qp @ rp, jnp.abs(rp), p,
            jnp.linalg.solve(SPD, x), jnp.linalg.lstsq(x[0], x[1, :, 0])[0])


def triangular(x):
    L = jnp.linalg.cholesky(SPD)
    b = x[:, :, :2]
    solve = jax.scipy.linalg.solve_triangular
    right = jax.lax.linalg.triangular_solve(L, jnp.swapaxes(b, -1, -2), left_side=False, lower=True,
                                            transpose_a=True)
    return solve(L, b, lower=True), solve(L, b, lower=True, trans=1), solve(
        jnp.swapaxes(L, -1, -2), b, lower=False, unit_diagonal=True), right


def elementwise(x):
    y = jnp.tanh(x) * jnp.exp(-x**2) + jnp.arctan2(x, 1.0 + x**2) - jnp.log1p(x**2)
    z = jnp.where(x > 0, jnp.sqrt(jnp.abs(x)), x**3) @ jnp.swapaxes(x, -1, -2)
    first, *_ = jnp.unstack(x, axis=1)
    named = jax.ad_checkpoint.checkpoint_name(first, "first")
    empty = x[:, :, :0] @ jnp.ones((0, 2))  # zero-size operands
    return (y, z, empty, jnp.argmax(x, axis=1), x.max(axis=(0, 2)), jnp.einsum("bij,bkj->bk", x, x),
            jnp.sort(x, axis=1), jnp.argsort(x[0, :, 0]), jnp.flip(x, (0, 2)), named)


@pytest.mark.parametrize("fn", [scatter_modes, gathers, scans, decompositions, triangular, elementwise])
def test_the_host_evaluates_as_xla(fn, caplog):
    """Each function's outputs from the host's evaluation of its jaxpr equal XLA's to
    rounding, and the host compiled nothing for it."""
    with jax.log_compiles(), caplog.at_level(logging.WARNING):
        host = host_or_compiled(fn, jax.jit(fn), A)
    assert not [r for r in caplog.records if "Compiling" in r.getMessage()], caplog.text
    xla = jax.jit(fn)(A)
    assert jax.tree.structure(host) == jax.tree.structure(xla)
    for h, x in zip(jax.tree.leaves(host), jax.tree.leaves(xla)):
        assert h.dtype == x.dtype and h.shape == x.shape
        np.testing.assert_allclose(np.asarray(h), np.asarray(x), rtol=1e-12, atol=1e-12)


def test_an_operation_the_host_lacks_is_compiled(caplog):
    """`jnp.sinh` is not evaluated on the host: the call compiles and gives XLA's result."""
    def fn(x):
        return jnp.sinh(x) + 1.0

    with jax.log_compiles(), caplog.at_level(logging.WARNING):
        out = host_or_compiled(fn, jax.jit(fn), A)
    assert any("Compiling" in r.getMessage() for r in caplog.records), caplog.text
    np.testing.assert_allclose(out, np.sinh(A) + 1.0, rtol=1e-14)


def test_a_program_numpy_would_take_long_on_is_compiled(caplog):
    """NumPy pays a Python dispatch per operation and a pass over memory per value; a
    program it would take longer to evaluate than XLA to compile (a loop of 10^5 steps,
    about 3 s of dispatches: a fraction of a second to compile) is compiled, while a
    large outer product (2^20 elements, milliseconds in NumPy) stays on the host."""
    def loop(x):
        return jax.lax.fori_loop(0, 100_000, lambda i, y: jnp.sin(y) * 0.5 + y[::-1] * 0.25, x)

    def outer(x):
        return jnp.outer(x, x).sum(axis=0)

    big = np.linspace(0.0, 1.0, 1024)
    for fn, compiles, expected in ((loop, True, None), (outer, False, big * big.sum())):
        with jax.log_compiles(), caplog.at_level(logging.WARNING):
            out = host_or_compiled(fn, jax.jit(fn), big)
        assert any("Compiling" in r.getMessage() for r in caplog.records) == compiles, caplog.text
        caplog.clear()
        if expected is not None:
            np.testing.assert_allclose(out, expected, rtol=1e-13)


def test_a_cholesky_that_fails_is_compiled():
    """NumPy raises where XLA's Cholesky returns NaN; the call falls back to XLA's."""
    def fn(m):
        return jnp.linalg.cholesky(m)

    out = np.asarray(host_or_compiled(fn, jax.jit(fn), -SPD))
    lower = np.tril(np.ones((5, 5), bool))
    assert np.isnan(out[:, lower]).all() and (out[:, ~lower] == 0.0).all()


def test_a_structure_evaluated_many_times_is_compiled(caplog):
    """The host evaluates a structure `HOST_USES` times, then compiles it once."""
    def fn(x):
        return jnp.sin(x) * 2.0

    compiled = []
    for k in range(HOST_USES + 5):
        with jax.log_compiles(), caplog.at_level(logging.WARNING):
            out = host_or_compiled(fn, jax.jit(fn), A + k)
        compiled.append(any("Compiling" in r.getMessage() for r in caplog.records))
        caplog.clear()
        np.testing.assert_allclose(out, np.sin(A + k) * 2.0, rtol=1e-15)
    assert compiled.index(True) == HOST_USES and compiled.count(True) == 1


def test_a_first_simulate_compiles_no_check_of_its_initial_state(caplog):
    """The initial state's checks (closure, velocity residual, lengths), the
    divide-and-conquer formulation's connection ranks and the saved states (101 of the
    A02 chain's) run on the host: a first simulate compiles its integration alone (the
    chain's rank still the DCA's)."""
    model = jmbs.examples.n_four_bar(40)
    with jax.log_compiles(), caplog.at_level(logging.WARNING):
        state = jmbs.DivideAndConquer().init(model, model.q0, 0.0)
        jmbs.simulate(model, 0.02)
    names = [r.getMessage() for r in caplog.records if "Compiling" in r.getMessage()]
    assert not [m for m in names if "check_terms" in m or "_connection_ranks" in m or "_solution" in m], names
    assert any("integrate" in m for m in names), names
    assert state.rank == jmbs.solvability(model, method=jmbs.DCA()).rank


def test_host_evaluation_can_be_switched_off(caplog):
    """`with host_evaluation(False)` compiles a program the host would evaluate, with the
    same result; after the block the host evaluates again."""
    def fn(x):
        return jnp.cos(x) * x

    def compiles(*args):
        with jax.log_compiles(), caplog.at_level(logging.WARNING):
            out = host_or_compiled(fn, jax.jit(fn), *args)
        found = any("Compiling" in r.getMessage() for r in caplog.records)
        caplog.clear()
        return found, np.asarray(out)

    with host_evaluation(False):
        compiled, xla = compiles(A)
    host, numpy = compiles(A[:2])
    assert compiled and not host
    np.testing.assert_allclose(xla[:2], numpy, rtol=1e-15)
