"""Host-side evaluation of a jaxpr with NumPy: a program that runs once on concrete
values (a model's derivation, a solvability report, reactions, the checks at an initial
state) without compiling it.

A new structure's `build()` traced and compiled a program that then ran once (0.1-0.3 s
of XLA: the largest share of a small model's build, and 405 compilations in the cold
test suite), and a first `simulate` compiled its initial state's checks (0.3 s). Their
operations are few and simple (indexing, broadcasting, elementwise arithmetic, products,
small decompositions, their derivatives), so the traced program is evaluated here
operation by operation on NumPy arrays instead: each primitive below follows XLA's
semantics (`lax`'s documentation) for the parameters these programs use. Anything else
raises `Unsupported`, and the caller compiles the program as before; so does a
structure whose evaluations would have taken as long as its compilation (a loop over
values, where the compiled program's fraction of a millisecond a call beats the host's
milliseconds) and a program that NumPy would take longer to evaluate than XLA to compile
(both estimated from the jaxpr: `host_seconds`, `compile_seconds`). The estimates, not
the clock, decide: the same calls take the same paths on any machine and in any run, so
a second identical command finds every program it compiles in the compilation cache.
Traced values (under `jax.grad`, `jax.vmap` or `jax.jit`) never come here.
"""

import contextlib
import functools
import math

import equinox as eqx
import jax.extend
import numpy as np

# A structure is evaluated on the host while its evaluations would have taken less time
# in all than its compilation (both estimated from its jaxpr; a loop over values then
# pays about twice the cheaper of the two at most), and at most `HOST_USES` times. The
# estimates, not measured seconds, are added up: measured ones vary with the machine's
# load and with a process's one-off costs (SciPy's import, LAPACK's first call: 0.13 s
# charged to a 2 ms evaluation), and then which calls compile would vary from run to run
# (estimates and measurements agree within 0.6-2x on the bundled models). A program
# that NumPy would take longer to evaluate once than XLA to compile is compiled at once:
# NumPy's time grows with the arrays and the steps of a loop, XLA's compilation does not
# (a dense report on 751 bodies, `C` 1,500 x 2,253: 4.6 s on the host against 0.3 s of
# compilation and 1.0 s for the first call), while a program of many small operations
# over many states gains the most (the A02 chain's 101 saved states: 0.55 s on the host
# against 3.1 s to compile).
HOST_USES = 64
# What NumPy's evaluation costs here (2-core machine, NumPy's LAPACK and BLAS): a Python
# dispatch per operation, a pass over memory per output element, the products'
# multiply-adds, and a factorization's m n min(m, n) (SVD 0.2-0.4 ns, QR 0.05-0.1 ns).
_PER_OPERATION, _PER_ELEMENT, _PER_PRODUCT, _PER_FACTORIZATION = 1e-5, 5e-9, 1e-10, 5e-10
_FACTORIZATIONS = frozenset({"svd", "qr", "eigh", "lu", "cholesky", "triangular_solve"})
# What lowering and XLA's compilation cost (the same machine): a fixed part and a part
# per operation, a loop's body counted once (jmbs's run-once programs: 0.5-1.1 ms).
_COMPILE_FIXED, _COMPILE_PER_OPERATION = 0.05, 6e-4
_USES: dict = {}  # per structure: [calls, estimated seconds on the host]
_ENABLED = [True]


@contextlib.contextmanager
def host_evaluation(enabled: bool):
    """Within the block, programs that run once are evaluated on the host as usual
    (True) or always compiled (False: a benchmark of the compiled programs' repeat
    calls, or a check of the host's result against XLA's)."""
    before, _ENABLED[0] = _ENABLED[0], bool(enabled)
    try:
        yield
    finally:
        _ENABLED[0] = before


def host_or_compiled(fn, compiled, *args):
    """`fn(*args)` for concrete `args`: `fn`'s jaxpr (traced once per structure: the
    non-array arguments and the arrays' shapes) evaluated with NumPy, the outputs put on
    the device; `compiled(*args)` (`fn` jitted) where the evaluator lacks an operation,
    where compiling is estimated cheaper, and once the structure's evaluations have cost
    what its compilation would (or `HOST_USES` calls)."""
    key, leaves = _key(fn, args)
    if _on_host(key):
        uses = _USES[key]
        try:
            closed, out_tree, host, _ = _traced(key)
            outs = evaluate(closed, *[np.asarray(x) for x in leaves])
            out = jax.tree.unflatten(out_tree, jax.device_put(outs))
        except Exception:  # `Unsupported`, or a use of NumPy not foreseen; an error of
            uses[0] = HOST_USES  # `fn`'s own is raised again by its compilation
        else:
            uses[0] += 1
            uses[1] += host
            return out
    return compiled(*args)


def will_evaluate(fn, *args) -> bool:
    """Whether `host_or_compiled(fn, ..., *args)` would evaluate on the host (it may
    still find an operation it lacks and compile). Traces `fn` (once per structure), so
    a caller can decide what to compile ahead."""
    return _on_host(_key(fn, args)[0])


def _on_host(key) -> bool:
    if not _ENABLED[0]:
        return False
    if len(_USES) > 4 * 1024:  # a long session's many structures: start counting again
        _USES.clear()
    uses = _USES.setdefault(key, [0, 0.0])
    if uses[0] >= HOST_USES:
        return False
    try:
        *_, budget = _traced(key)
    except Exception:  # `Unsupported`: cheaper compiled; an error of `fn`'s own is
        uses[0] = HOST_USES  # raised again by its compilation
        return False
    return uses[1] < budget


def _key(fn, args):
    """The structure of a call (`fn`, the non-array arguments, the arrays' shapes and
    dtypes) and its array leaves."""
    dynamic, static = eqx.partition(args, eqx.is_array)
    leaves, tree = jax.tree.flatten(dynamic)
    fixed, fixed_tree = jax.tree.flatten(static)
    return (fn, tree, fixed_tree, tuple(fixed), tuple((np.shape(x), x.dtype) for x in leaves)), leaves


@functools.lru_cache(maxsize=256)
def _traced(key):
    """The closed jaxpr of `fn` as a function of its array leaves, its output tree, and
    the estimated seconds of one evaluation on the host, and its compilation's (the
    host's budget for the structure)."""
    fn, tree, fixed_tree, fixed, avals = key
    static = jax.tree.unflatten(fixed_tree, fixed)

    def flat(*leaves):
        return fn(*eqx.combine(jax.tree.unflatten(tree, leaves), static))

    flat.__name__ = flat.__qualname__ = fn.__name__  # as the compile log names it
    closed, shapes = jax.make_jaxpr(flat, return_shape=True)(
        *[jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in avals])
    host, compiled = host_seconds(closed.jaxpr), compile_seconds(closed.jaxpr)
    if host > compiled:
        raise Unsupported(f"an estimated {host:.2g} s on the host, {compiled:.2g} s to compile")
    return closed, jax.tree.structure(shapes), host, compiled


def compile_seconds(jaxpr) -> float:
    """Lowering's and XLA's estimated seconds for `jaxpr` (`_COMPILE_FIXED` ...)."""
    return _COMPILE_FIXED + _COMPILE_PER_OPERATION * _operations(jaxpr)


def _operations(jaxpr) -> int:
    """The operations of `jaxpr` and of its inner jaxprs, each counted once."""
    return len(jaxpr.eqns) + sum(_operations(inner) for e in jaxpr.eqns for inner in _inner(e))


def _inner(eqn):
    """The jaxprs in `eqn`'s parameters (a scan's body, a loop's, a cond's branches...)."""
    for p in eqn.params.values():
        for inner in p if isinstance(p, tuple | list) else (p,):
            inner = getattr(inner, "jaxpr", inner)
            if isinstance(inner, jax.extend.core.Jaxpr):
                yield inner


def host_seconds(jaxpr) -> float:
    """NumPy's estimated seconds for `jaxpr` (`_PER_OPERATION` ...): a scan's body counts
    once per step, a loop's once, every branch of a `cond`."""
    total = 0.0
    for e in jaxpr.eqns:
        out = sum(math.prod(getattr(v.aval, "shape", ())) for v in e.outvars)
        total += _PER_OPERATION + _PER_ELEMENT * out
        if e.primitive.name == "dot_general":
            (contracted, _), _ = e.params["dimension_numbers"]
            total += _PER_PRODUCT * out * math.prod(e.invars[0].aval.shape[d] for d in contracted)
        elif e.primitive.name in _FACTORIZATIONS:
            *batch, m, n = e.invars[0].aval.shape
            total += _PER_FACTORIZATION * math.prod(batch) * m * n * min(m, n)
        steps = e.params.get("length", 1) if e.primitive.name == "scan" else 1
        total += steps * sum(host_seconds(inner) for inner in _inner(e))
    return total


class Unsupported(Exception):
    """A primitive, or a use of one, that this evaluator does not implement."""


def evaluate(closed, *args) -> list[np.ndarray]:
    """The outputs of the closed jaxpr `closed` at the arrays `args`, as NumPy arrays."""
    with np.errstate(all="ignore"):  # XLA computes untaken branches silently too
        return _closed(closed, args)


def _closed(closed, args) -> list:
    return _run(closed.jaxpr, [np.asarray(c) for c in closed.consts], list(args))


def _run(jaxpr, consts, args) -> list:
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(v):
        if isinstance(v, jax.extend.core.Literal):
            return np.asarray(v.val, dtype=v.aval.dtype)
        return env[v]

    for eqn in jaxpr.eqns:
        rule = _RULES.get(eqn.primitive.name)
        if rule is None:
            raise Unsupported(eqn.primitive.name)
        try:
            out = rule(*[read(v) for v in eqn.invars], **eqn.params)
            outs = out if eqn.primitive.multiple_results else [out]
            for v, x in zip(eqn.outvars, outs, strict=True):
                env[v] = np.asarray(x, dtype=v.aval.dtype).reshape(v.aval.shape)
        except (TypeError, ValueError, IndexError) as e:  # a use of the primitive not
            # foreseen, or NumPy's `LinAlgError` (a `ValueError`: a factorization that
            # fails, where XLA returns NaN)
            raise Unsupported(f"{eqn.primitive.name}: {e}") from e
    return [read(v) for v in jaxpr.outvars]


def _call(*args, jaxpr, **_):
    return _closed(jaxpr, args)


def _cond(index, *args, branches, **_):
    return _closed(branches[int(np.clip(index, 0, len(branches) - 1))], args)


def _custom_jvp(*args, call_jaxpr, **_):
    return _closed(call_jaxpr, args)


def _scan(*args, jaxpr, length, reverse, ft_in, **_):
    """`lax.scan`: `ft_in` holds the numbers of constants, carried values and scanned
    inputs (JAX 0.12's flat trees; any other form is `Unsupported`)."""
    try:
        n_consts, n_carry, _ = (len(part) for part in ft_in.unpack())
    except Exception as e:
        raise Unsupported(f"scan parameters {ft_in!r}") from e
    body = jaxpr.jaxpr if hasattr(jaxpr, "jaxpr") else jaxpr
    consts = [np.asarray(c) for c in getattr(jaxpr, "consts", ())]
    fixed, carry, xs = args[:n_consts], list(args[n_consts:n_consts + n_carry]), args[n_consts + n_carry:]
    ys = []
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        out = _run(body, consts, [*fixed, *carry, *(x[i] for x in xs)])
        carry, y = out[:n_carry], out[n_carry:]
        ys.append(y)
    if reverse:
        ys.reverse()
    n_ys = len(body.outvars) - n_carry
    stacked = [np.stack([y[k] for y in ys]) if ys else
               np.zeros((0, *body.outvars[n_carry + k].aval.shape), body.outvars[n_carry + k].aval.dtype)
               for k in range(n_ys)]
    return [*carry, *stacked]


def _while(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts]
    state = list(args[cond_nconsts + body_nconsts:])
    pred = _call(*cond_consts, *state, jaxpr=cond_jaxpr)[0]
    while np.any(pred):  # a vmapped loop's predicate has the batch's shape: the members
        new = _call(*body_consts, *state, jaxpr=body_jaxpr)  # still running take a step
        if pred.ndim:
            new = [np.where(pred.reshape(pred.shape + (1,) * (x.ndim - pred.ndim)), n, x)
                   for n, x in zip(new, state)]
        state = new
        pred = _call(*cond_consts, *state, jaxpr=cond_jaxpr)[0]
    return state


def _svd(x, full_matrices, compute_uv, subset_by_index=None, algorithm=None):
    if subset_by_index not in (None, (0, min(x.shape[-2:]))):
        raise Unsupported("svd of a subset")
    if not compute_uv:
        return [np.linalg.svd(x, compute_uv=False)]
    u, s, vt = np.linalg.svd(x, full_matrices=full_matrices)
    return [s, u, vt]


def _eigh(x, lower, sort_eigenvalues, subset_by_index=None, algorithm=None):
    if subset_by_index not in (None, (0, x.shape[-1])):
        raise Unsupported("eigh of a subset")
    w, v = np.linalg.eigh(x, UPLO="L" if lower else "U")
    return [v, w]


def _qr(x, full_matrices, pivoting=False, **_):
    if not pivoting:
        return list(np.linalg.qr(x, mode="complete" if full_matrices else "reduced"))
    import scipy.linalg  # here: importing it costs `import jmbs` 0.07 s

    mode = "full" if full_matrices else "economic"
    flat = x.reshape(-1, *x.shape[-2:])  # LAPACK's geqp3, one matrix at a time
    parts = [scipy.linalg.qr(a, mode=mode, pivoting=True) for a in flat]
    return [np.stack([part[k] for part in parts]).reshape(*x.shape[:-2], *parts[0][k].shape)
            if parts else np.zeros(0) for k in range(3)]


def _lu(x):
    """`lax.linalg.lu`: LAPACK's getrf (the factors, its row swaps 0-based) and the
    permutation the swaps make."""
    import scipy.linalg

    flat = x.reshape(-1, *x.shape[-2:])
    m, k = x.shape[-2], min(x.shape[-2:])
    lus, swaps, perms = [], [], []
    for a in flat:
        lu, piv = scipy.linalg.lu_factor(a, check_finite=False)
        perm = np.arange(m)
        for i, j in enumerate(piv[:k]):
            perm[[i, j]] = perm[[j, i]]
        lus.append(lu), swaps.append(piv[:k]), perms.append(perm)
    batch = x.shape[:-2]
    return [np.reshape(lus, x.shape), np.reshape(swaps, (*batch, k)), np.reshape(perms, (*batch, m))]


def _sort(*operands, dimension, is_stable, num_keys):
    """`lax.sort`: the operands ordered by the first `num_keys` of them (lexicographically)."""
    keys = [np.moveaxis(k, dimension, -1) for k in operands[:num_keys]]
    order = np.lexsort(keys[::-1], axis=-1)
    return [np.moveaxis(np.take_along_axis(np.moveaxis(x, dimension, -1), order, axis=-1), -1, dimension)
            for x in operands]


def _triangular_solve(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    a = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        a = a.copy()
        a[..., np.arange(n), np.arange(n)] = 1.0
    if transpose_a:
        a = np.swapaxes(a, -1, -2)
    if conjugate_a:
        a = np.conj(a)
    if left_side:  # op(a) x = b
        return np.linalg.solve(a, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _linear_solve(*args, const_lengths, jaxprs):
    """`lax.custom_linear_solve`: its `solve` function applied to the right-hand side."""
    start = const_lengths.matvec + const_lengths.vecmat
    solve_consts = args[start:start + const_lengths.solve]
    rhs = args[sum(const_lengths):]
    return _call(*solve_consts, *rhs, jaxpr=jaxprs.solve)


def _platform_index(*_, platforms, **__):
    """The branch a CPU run takes: one that names `cpu`, else the default (None)."""
    for k, names in enumerate(platforms):
        if names is not None and "cpu" in names:
            return np.int32(k)
    if None in platforms:
        return np.int32(platforms.index(None))
    raise Unsupported("platform_index without a CPU branch")


def _broadcast_in_dim(x, *dyn, shape, broadcast_dimensions, **_):
    if dyn:
        raise Unsupported("broadcast_in_dim with dynamic shape")
    kept = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        kept[d] = x.shape[i]
    return np.broadcast_to(x.reshape(kept), shape)


def _reshape(x, *dyn, new_sizes, dimensions, **_):
    if dyn or dimensions is not None:
        raise Unsupported("reshape with dimensions")
    return x.reshape(new_sizes)


def _iota(*dyn, dtype, shape, dimension, **_):
    if dyn:
        raise Unsupported("iota with dynamic shape")
    r = np.arange(shape[dimension], dtype=dtype)
    return np.broadcast_to(r.reshape([-1 if d == dimension else 1 for d in range(len(shape))]), shape)


def _select_n(which, *cases):
    if which.dtype == bool:
        return np.where(which, cases[1], cases[0]) if len(cases) == 2 else cases[0]
    return np.choose(which, np.broadcast_arrays(*cases))


def _slice(x, start_indices, limit_indices, strides):
    return x[tuple(slice(a, b, s) for a, b, s in zip(start_indices, limit_indices,
                                                      strides or [1] * x.ndim))]


def _pad(x, value, padding_config):
    if any(lo < 0 or hi < 0 for lo, hi, _ in padding_config):
        raise Unsupported("pad with negative edges")
    shape = [lo + hi + n + max(n - 1, 0) * gap for (lo, hi, gap), n in zip(padding_config, x.shape)]
    out = np.full(shape, value, dtype=x.dtype)
    out[tuple(slice(lo, lo + n + max(n - 1, 0) * gap, gap + 1)
              for (lo, _, gap), n in zip(padding_config, x.shape))] = x
    return out


def _dot_general(a, b, dimension_numbers, **_):
    """`lax.dot_general` as one batched `matmul` (BLAS): batch dimensions first, then
    `a`'s free ones, then `b`'s."""
    (ca, cb), (ba, bb) = dimension_numbers
    fa = [i for i in range(a.ndim) if i not in ca and i not in ba]
    fb = [j for j in range(b.ndim) if j not in cb and j not in bb]
    batch, free_a, free_b = ([x.shape[i] for i in dims] for x, dims in ((a, ba), (a, fa), (b, fb)))
    n, k = math.prod(batch), math.prod(a.shape[i] for i in ca)
    lhs = a.transpose([*ba, *fa, *ca]).reshape(n, math.prod(free_a), k)
    rhs = b.transpose([*bb, *cb, *fb]).reshape(n, k, math.prod(free_b))
    return np.matmul(lhs, rhs).reshape(*batch, *free_a, *free_b)


def _window_index(out_shape, batch_pos, window_pos, indices, operand_shape, sizes, *, collapsed,
                  index_map, operand_batching, indices_batching):
    """Per output (update) element, its operand index (a tuple of arrays of `out_shape`) and
    whether its window starts in bounds: the index arithmetic `gather` and `scatter` share
    (XLA's semantics; the index vector is the last axis of `indices`)."""
    mesh = np.indices(out_shape, dtype=np.int64)
    batch = tuple(mesh[p] for p in batch_pos)
    start = indices[batch] if batch else indices.reshape(out_shape[:0] + (-1,))
    window = [d for d in range(len(operand_shape)) if d not in collapsed and d not in operand_batching]
    index, inside = [], np.ones(out_shape, bool)
    for d in range(len(operand_shape)):
        s = np.zeros(out_shape, np.int64)
        if d in index_map:
            raw = start[..., index_map.index(d)].astype(np.int64)
            s = np.clip(raw, 0, operand_shape[d] - sizes[d])
            inside &= s == raw
        if d in operand_batching:
            s = batch[indices_batching[operand_batching.index(d)]]
        if d in window:
            s = s + mesh[window_pos[window.index(d)]]
        index.append(np.broadcast_to(s, out_shape))
    return tuple(index), inside


def _gather(x, indices, dimension_numbers, slice_sizes, mode, fill_value=None, **_):
    dn = dimension_numbers
    taken = _take(x, indices, dn, slice_sizes, mode)
    if taken is not None:
        return taken
    rank = indices.ndim - 1 + len(dn.offset_dims)
    batch_pos = [p for p in range(rank) if p not in dn.offset_dims]
    window = [d for d in range(x.ndim) if d not in dn.collapsed_slice_dims
              and d not in dn.operand_batching_dims]
    shape = [0] * rank
    for p, n in zip(batch_pos, indices.shape[:-1]):
        shape[p] = n
    for p, d in zip(dn.offset_dims, window):
        shape[p] = slice_sizes[d]
    index, inside = _window_index(
        tuple(shape), batch_pos, list(dn.offset_dims), indices, x.shape, slice_sizes,
        collapsed=tuple(dn.collapsed_slice_dims), index_map=tuple(dn.start_index_map),
        operand_batching=tuple(dn.operand_batching_dims),
        indices_batching=tuple(dn.start_indices_batching_dims))
    if "FILL" in str(mode) and not inside.all():
        raise Unsupported("gather out of bounds with a fill value")
    return x[index]


def _take(x, indices, dn, slice_sizes, mode):
    """The common gather, one NumPy fancy index without `_window_index`'s index arrays:
    rows picked along the indexed dimensions (each collapsed), the other dimensions
    whole (`x[:, i]` and its vmapped forms); None for any other gather."""
    indexed = tuple(dn.start_index_map)
    if (not indexed or dn.operand_batching_dims or sorted(indexed) != sorted(dn.collapsed_slice_dims)
            or any(slice_sizes[d] != (1 if d in indexed else x.shape[d]) for d in range(x.ndim))):
        return None
    raw = [indices[..., k].astype(np.int64) for k in range(len(indexed))]
    picks = [np.clip(r, 0, x.shape[d] - 1) for r, d in zip(raw, indexed)]
    if "FILL" in str(mode) and not all((p == r).all() for p, r in zip(picks, raw)):
        raise Unsupported("gather out of bounds with a fill value")
    whole = [d for d in range(x.ndim) if d not in indexed]
    got = x.transpose([*indexed, *whole])[tuple(picks)]  # the batch's axes, then the window's
    nb = indices.ndim - 1
    batch_pos = [p for p in range(nb + len(whole)) if p not in dn.offset_dims]
    source = {p: i for i, p in enumerate(batch_pos)} | {p: nb + i for i, p in enumerate(dn.offset_dims)}
    return got.transpose([source[p] for p in range(got.ndim)])


def _scatter(combine):
    """`lax.scatter` (`combine` None: the update replaces) and its `scatter-add` kind of
    primitives (`combine` the NumPy ufunc). An update window that does not fit in the
    operand is dropped (XLA's default) or, in `CLIP` mode, moved inside."""
    return lambda *args, **params: _scatter_with(combine, *args, **params)


def _scatter_with(combine, x, indices, updates, dimension_numbers, mode, update_jaxpr=None, **_):
    dn = dimension_numbers
    batch_pos = [p for p in range(updates.ndim) if p not in dn.update_window_dims]
    window = [d for d in range(x.ndim) if d not in dn.inserted_window_dims
              and d not in dn.operand_batching_dims]
    sizes = [1] * x.ndim
    for p, d in zip(dn.update_window_dims, window):
        sizes[d] = updates.shape[p]
    index, inside = _window_index(
        updates.shape, batch_pos, list(dn.update_window_dims), indices, x.shape, sizes,
        collapsed=tuple(dn.inserted_window_dims), index_map=tuple(dn.scatter_dims_to_operand_dims),
        operand_batching=tuple(dn.operand_batching_dims),
        indices_batching=tuple(dn.scatter_indices_batching_dims))
    if "CLIP" not in str(mode):
        index, updates = tuple(i[inside] for i in index), updates[inside]
    out = np.array(x, copy=True)
    if combine is None:
        out[index] = updates
    else:
        combine.at(out, index, updates)
    return out


def _dynamic_slice(x, *starts, slice_sizes):
    if len(starts) != x.ndim:
        raise Unsupported("dynamic_slice with dynamic sizes")
    s = [int(np.clip(i, 0, n - k)) for i, n, k in zip(starts, x.shape, slice_sizes)]
    return x[tuple(slice(a, a + k) for a, k in zip(s, slice_sizes))]


def _dynamic_update_slice(x, update, *starts):
    s = [int(np.clip(i, 0, n - k)) for i, n, k in zip(starts, x.shape, update.shape)]
    out = np.array(x, copy=True)
    out[tuple(slice(a, a + k) for a, k in zip(s, update.shape))] = update
    return out


def _div(a, b):
    if np.issubdtype(a.dtype, np.integer):  # lax.div rounds toward zero
        q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
        return np.where(b == 0, -1, np.sign(a) * np.sign(b) * q)
    return a / b


def _argminmax(fn):
    def rule(x, axes, index_dtype):
        (axis,) = axes
        return fn(x, axis=axis).astype(index_dtype)
    return rule


def _reduce(fn):
    def rule(x, axes, **_):
        return fn(x, axis=tuple(int(a) for a in axes))
    return rule


def _unary(fn):
    def rule(x, **_):
        return fn(x)
    return rule


def _binary(fn):
    def rule(a, b, **_):
        return fn(a, b)
    return rule


def _split(x, sizes, axis):
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


def _convert(x, new_dtype, **_):
    if np.issubdtype(new_dtype, np.integer) and np.issubdtype(x.dtype, np.floating):
        if not np.all(np.isfinite(x)):
            raise Unsupported("non-finite value converted to an integer")
    return x.astype(new_dtype)


_RULES = {
    "jit": _call, "pjit": _call, "closed_call": _call, "core_call": _call, "cond": _cond,
    "scan": _scan, "while": _while, "custom_linear_solve": _linear_solve,
    "cholesky": np.linalg.cholesky, "svd": _svd, "eigh": _eigh,
    "qr": _qr, "triangular_solve": _triangular_solve, "sort": _sort, "lu": _lu,
    "rev": lambda x, dimensions: np.flip(x, tuple(dimensions)),
    "unstack": lambda x, axis: list(np.moveaxis(x, axis, 0)), "name": lambda x, name: x,
    "custom_jvp_call": _custom_jvp, "platform_index": _platform_index,
    "broadcast_in_dim": _broadcast_in_dim, "reshape": _reshape, "iota": _iota,
    "squeeze": lambda x, dimensions: np.squeeze(x, axis=tuple(dimensions)),
    "expand_dims": lambda x, dimensions: np.expand_dims(x, tuple(dimensions)),
    "transpose": lambda x, permutation: np.transpose(x, permutation),
    "concatenate": lambda *xs, dimension: np.concatenate(xs, axis=dimension),
    "stack": lambda *xs, axis: np.stack(xs, axis=axis), "split": _split,
    "slice": _slice, "pad": _pad, "gather": _gather, "scatter": _scatter(None),
    "scatter-add": _scatter(np.add), "scatter_add": _scatter(np.add),
    "scatter-mul": _scatter(np.multiply), "scatter_mul": _scatter(np.multiply),
    "scatter-min": _scatter(np.minimum), "scatter_min": _scatter(np.minimum),
    "scatter-max": _scatter(np.maximum), "scatter_max": _scatter(np.maximum), "add_any": _binary(np.add),
    "dynamic_slice": _dynamic_slice, "dynamic_update_slice": _dynamic_update_slice,
    "select_n": _select_n, "convert_element_type": _convert,
    "copy": lambda x: x, "copy_p": lambda x: x, "stop_gradient": lambda x: x,
    "optimization_barrier": lambda *xs: list(xs),
    "dot_general": _dot_general,
    "reduce_sum": _reduce(np.sum), "reduce_max": _reduce(np.max), "reduce_min": _reduce(np.min),
    "reduce_prod": _reduce(np.prod), "reduce_and": _reduce(np.all), "reduce_or": _reduce(np.any),
    "argmax": _argminmax(np.argmax), "argmin": _argminmax(np.argmin),
    "add": _binary(np.add), "sub": _binary(np.subtract), "mul": _binary(np.multiply),
    "div": _binary(_div), "rem": _binary(np.fmod), "pow": _binary(np.power),
    "max": _binary(np.maximum), "min": _binary(np.minimum), "atan2": _binary(np.arctan2),
    "nextafter": _binary(np.nextafter),
    "eq": _binary(np.equal), "ne": _binary(np.not_equal), "lt": _binary(np.less),
    "le": _binary(np.less_equal), "gt": _binary(np.greater), "ge": _binary(np.greater_equal),
    "and": _binary(np.bitwise_and), "or": _binary(np.bitwise_or), "xor": _binary(np.bitwise_xor),
    "not": _unary(np.invert), "neg": _unary(np.negative), "abs": _unary(np.abs),
    "sign": _unary(np.sign), "floor": _unary(np.floor), "ceil": _unary(np.ceil),
    "sqrt": _unary(np.sqrt), "rsqrt": _unary(lambda x: 1.0 / np.sqrt(x)),
    "cbrt": _unary(np.cbrt), "exp": _unary(np.exp), "log": _unary(np.log),
    "expm1": _unary(np.expm1), "log1p": _unary(np.log1p), "tanh": _unary(np.tanh),
    "sin": _unary(np.sin), "cos": _unary(np.cos), "tan": _unary(np.tan),
    "asin": _unary(np.arcsin), "acos": _unary(np.arccos), "atan": _unary(np.arctan),
    "square": _unary(np.square), "is_finite": _unary(np.isfinite),
    "integer_pow": lambda x, y: x ** y,
    "clamp": lambda lo, x, hi: np.clip(x, lo, hi),
    "round": lambda x, rounding_method: (np.round(x) if int(rounding_method) == 1
                                         else np.sign(x) * np.floor(np.abs(x) + 0.5)),
    "erf": _unary(np.vectorize(math.erf, otypes=[float])),
}
