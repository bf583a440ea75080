"""`jmbs.batch_map`: a function of one parameter set over a batch, in bounded-memory
chunks, sharded over devices (host-side orchestration; the traced part is `jax.vmap(fn)`)."""

import collections
import hashlib
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from ._progress import tqdm

# Jitted `vmap(fn)` per (fn, devices); jit itself keeps one executable per chunk shape.
_CACHE: "collections.OrderedDict[tuple, tuple]" = collections.OrderedDict()
_CACHE_SIZE = 64
AXIS = "batch"


def _resolve_devices(devices) -> tuple:
    """The devices to shard over, as a tuple (see `batch_map`)."""
    every = jax.devices()
    if devices is None:
        return tuple(every)
    if isinstance(devices, (int, np.integer)) and not isinstance(devices, bool):
        n = int(devices)
        if not 1 <= n <= len(every):
            raise ValueError(f"devices={n}: there are {len(every)} devices ({every[0].platform}); "
                             f"pass an int between 1 and {len(every)}, a list of devices, or None for all")
        return tuple(every[:n])
    if isinstance(devices, jax.Device):
        return (devices,)
    try:
        devs = tuple(devices)
    except TypeError:
        raise ValueError(f"devices must be None, an int or a list of jax devices; got {devices!r}") from None
    if not devs:
        raise ValueError("devices is empty; pass None (all devices), an int or a non-empty list of devices")
    if not all(isinstance(d, jax.Device) for d in devs):
        raise ValueError(f"devices must be jax devices (e.g. jax.devices()[:2]); got {devs!r}")
    if len(set(devs)) != len(devs):
        raise ValueError(f"devices lists a device twice: {devs!r}")
    return devs


def _check_batch(batch) -> tuple[list[np.ndarray], Any, int]:
    """Leaves as NumPy arrays, the tree structure and the common leading size `B`."""
    with_path, treedef = jax.tree_util.tree_flatten_with_path(batch)
    if not with_path:
        raise ValueError("the batch has no arrays; pass a pytree (e.g. a dict) of arrays with a "
                         "leading batch axis")
    leaves, sizes = [], {}
    for path, leaf in with_path:
        name = jax.tree_util.keystr(path) or "<the batch>"
        x = np.asarray(leaf)
        if x.ndim == 0:
            raise ValueError(f"batch leaf {name} is a scalar (shape ()); every leaf needs a leading "
                             "batch axis, e.g. np.full(B, value) for a parameter shared by all elements")
        leaves.append(x)
        sizes[name] = x.shape
    lead = {shape[0] for shape in sizes.values()}
    if len(lead) > 1:
        listing = ", ".join(f"{name}: {shape}" for name, shape in sizes.items())
        raise ValueError(f"the batch leaves have different leading (batch) sizes {sorted(lead)}; "
                         f"every leaf must have the same first axis. Shapes: {listing}")
    B = lead.pop()
    if B == 0:
        raise ValueError(f"the batch is empty (leading size 0; shapes: "
                         f"{', '.join(f'{n}: {s}' for n, s in sizes.items())})")
    return leaves, treedef, B


def _check_processes(devs: tuple, leaves: list[np.ndarray], chunk_size: int) -> None:
    """Under `jax.distributed`: the same call in every process, and a device in each one.

    A process that fed other data than the others would silently mix batches, and one
    with another batch size would wait forever for collectives that the others never
    start: compare a digest of the call over all processes first (one all-gather).
    """
    from jax.experimental import multihost_utils

    # the leaves, not the treedef's repr: that may show addresses of static objects
    h = hashlib.sha256(f"{len(leaves)}|{chunk_size}|{[(d.platform, d.id) for d in devs]}".encode())
    for x in leaves:
        h.update(f"|{x.dtype.str}{x.shape}".encode())
        if x.dtype.kind != "O":  # object arrays fail below, in every process alike
            h.update(np.ascontiguousarray(x).view(np.uint8).data)
    mine = np.frombuffer(h.digest(), dtype=np.uint32)
    every = np.asarray(multihost_utils.process_allgather(mine))
    other = [k for k in range(len(every)) if not np.array_equal(every[k], every[0])]
    if other:
        raise ValueError(f"batch_map was called with another batch, chunk_size or devices in process(es) "
                         f"{other} than in process 0 (process {jax.process_index()} of "
                         f"{jax.process_count()}); under jax.distributed every process must call "
                         "batch_map with the same fn, the same full batch and the same arguments")
    missing = sorted(set(range(jax.process_count())) - {d.process_index for d in devs})
    if missing:
        raise ValueError(f"devices has no device of process(es) {missing}; under jax.distributed "
                         f"({jax.process_count()} processes) every process computes a share of the "
                         "batch, so pass devices=None (all devices of all processes) or a list that "
                         "holds at least one device of every process")


def _compiled(fn: Callable, devs: tuple) -> tuple[Callable, Any]:
    """`jit(vmap(fn))` for these devices, cached, and the input sharding (None for one device)."""
    key = (fn, tuple((d.platform, d.id) for d in devs))
    try:
        hit = _CACHE.get(key)
    except TypeError:  # an unhashable callable: compiled once per call instead
        key, hit = None, None
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    if len(devs) == 1:
        out = (jax.jit(jax.vmap(fn)), None)
    else:
        mesh = jax.sharding.Mesh(np.array(devs), (AXIS,))
        sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(AXIS))
        out = (jax.jit(jax.vmap(fn), in_shardings=(sharding,), out_shardings=sharding), sharding)
    if key is not None:
        _CACHE[key] = out
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return out


def _to_host(out):
    """Outputs as NumPy arrays on this host (gathered across processes when sharded over them)."""
    if jax.process_count() > 1 and not all(x.is_fully_addressable for x in jax.tree.leaves(out)):
        from jax.experimental import multihost_utils

        return multihost_utils.process_allgather(out, tiled=True)
    return jax.tree.map(np.asarray, jax.device_get(out))


def batch_map(fn: Callable, batch, *, chunk_size: int = 1024, devices: "int | Sequence | None" = None,
              progress: bool | None = None, desc: str | None = None):
    """Evaluate a function of one parameter set over a batch, in chunks, sharded over devices.

    `fn` is vmapped and jitted once per device set (the last chunk is padded to
    the chunk size, so one compilation serves every chunk); chunks run one after
    the other, so device memory is bounded by one chunk whatever the batch size.
    With several devices each chunk is split evenly over them along the batch
    axis (`jax.sharding.NamedSharding` on a one-axis mesh `"batch"`). Under
    `jax.distributed` (several processes, e.g. one per host), the mesh holds the
    devices of every process: every process must call `batch_map` with the same
    `fn`, the same full batch and the same arguments; each one computes the
    shards of its own devices, and every process gets the whole result (gathered
    after each chunk).

    ```python
    model = jmbs.examples.parallelogram()
    f = jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0)

    def fn(p):
        m = model.with_params(p)
        return jmbs.reactions(m, m.q0, m.v0, 0.0, formulation=f).reactions.forces

    forces = jmbs.batch_map(fn, {"coupler.mass": np.linspace(1.0, 3.0, 10_000)}, chunk_size=512)
    ```

    **Arguments:**
    - `fn`: a function of one batch element (a pytree of arrays, e.g. a dict of
      design parameters `{"B0.point": (2,), "crank0.mass": ()}`) returning a
      pytree of arrays. Traced under `jax.vmap`: it must be a pure function of
      arrays (e.g. `model.with_params` followed by jmbs's traceable functions).
    - `batch`: a pytree whose leaves share a leading batch axis of size `B`.
    - `chunk_size`: elements per compiled call (default 1024), rounded up to a
      multiple of the number of devices; smaller when `B` is smaller.
    - `devices`: `None` (all of `jax.devices()`, every process's under
      `jax.distributed`), an int `n` (the first `n`), or a list of devices.
      With one device nothing is sharded. Under `jax.distributed` they must
      include a device of every process.
    - `progress`: show a progress bar over the elements (default: when stderr
      is a terminal, and only in process 0 under `jax.distributed`).
    - `desc`: the progress bar's label.

    **Returns:** `fn`'s output structure with NumPy arrays of leading size `B`,
    on the host.

    **Raises:** `ValueError` for an empty batch, a leaf without a batch axis,
    leaves with different leading sizes (the message names the leaves and their
    shapes), a `chunk_size` below 1, or invalid `devices`; under
    `jax.distributed`, in every process, when the processes were given
    different batches, chunk sizes or devices, or when `devices` leaves a
    process without a device.
    """
    if not callable(fn):
        raise ValueError(f"fn must be a function of one batch element; got {fn!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive int; got {chunk_size!r}")
    leaves, treedef, B = _check_batch(batch)
    devs = _resolve_devices(devices)
    nd = len(devs)
    size = math.ceil(min(int(chunk_size), B) / nd) * nd
    if jax.process_count() > 1:
        _check_processes(devs, leaves, size)
    call, sharding = _compiled(fn, devs)

    def place(x: np.ndarray):
        if sharding is None:
            return jax.device_put(x, devs[0])
        return jax.make_array_from_callback(x.shape, sharding, lambda index: x[index])

    if progress is None:  # one bar under jax.distributed: process 0's
        show = bool(getattr(sys.stderr, "isatty", lambda: False)()) and jax.process_index() == 0
    else:
        show = bool(progress)
    chunks = []
    with tqdm(total=B, desc=desc or "batch_map", unit="elem", disable=not show) as bar:
        for start in range(0, B, size):
            part = [x[start:start + size] for x in leaves]
            n = part[0].shape[0]
            if n < size:  # pad the last chunk with its last element; trimmed below
                part = [np.concatenate([x, np.repeat(x[-1:], size - n, axis=0)]) for x in part]
            args = jax.tree_util.tree_unflatten(treedef, [place(x) for x in part])
            out = _to_host(call(args))
            chunks.append(jax.tree.map(lambda y, n=n: y[:n], out))
            bar.update(n)
    if len(chunks) == 1:
        return chunks[0]
    return jax.tree.map(lambda *ys: np.concatenate(ys, axis=0), *chunks)
