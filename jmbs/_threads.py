"""`jmbs.fair_share()`: this process's XLA:CPU programs on one core that no other process
that called it holds, so that processes side by side share the cores instead of
fighting over them.

XLA's CPU backend runs a program's operations on a thread pool that spans every core
the process may use. jmbs's programs are many small operations in long loops (one
integration step after another): each hand-over between the pool's threads waits for a
core, and two such processes on the same cores wait on each other's threads. Measured
with `benchmarks/bench_fair_share.py` on the 2-core machine, a warm 5 s Bricard run took
0.41 s alone and 1.3-1.5 s beside a second one (0.28 of its alone-speed); pinned to a
core each, 0.28 s alone and 0.29-0.30 s side by side. Turning XLA's Eigen pool off
(`--xla_cpu_multi_thread_eigen=false`) changed nothing measurable; the affinity is
what works. Large batched programs (`jax.vmap` over thousands of designs) lose the
other cores with it: use processes (or `jmbs.batch_map` over devices) for those.
"""

import fcntl
import os
import sys
import tempfile
from pathlib import Path

from ._misc import warn_user

# The descriptor of the claimed core's lock file, held for the life of the process.
_CLAIM: list = []


def _claim_core(cores: list[int]) -> int:
    """A core of `cores` whose lock file no other live process holds (the first free
    one), else one by process id."""
    folder = Path(tempfile.gettempdir()) / "jmbs-cores"
    for core in cores:
        try:
            folder.mkdir(exist_ok=True)
            fd = os.open(folder / f"core-{core}.lock", os.O_WRONLY | os.O_CREAT, 0o666)
        except OSError:  # another user's folder or file: no claim possible
            break
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held by a live process
            os.close(fd)
            continue
        _CLAIM.append(fd)  # open (and locked) until the process ends
        return core
    return cores[os.getpid() % len(cores)]


def fair_share() -> bool:
    """Run this process's XLA:CPU programs on one core that no other process that
    called `fair_share` holds (see the module).

    Call it before the first JAX computation: the backend's threads take the affinity
    they are started with. The `jmbs` command does; `bench_fair_share.py` in
    benchmarks/ measures it. A process already limited to one core is left as it is.
    Returns whether it took effect: `False`, with a warning, if the backend had
    already started or the system cannot set a process's cores.
    """
    bridge = sys.modules.get("jax._src.xla_bridge")
    if bridge is not None and bridge.backends_are_initialized():
        warn_user("jmbs.fair_share: JAX's backend has already started in this process, so "
                  "its threads keep the cores they have; call jmbs.fair_share() before the "
                  "first JAX computation")
        return False
    if not hasattr(os, "sched_setaffinity"):
        warn_user("jmbs.fair_share: this system cannot set the cores of a process (Linux "
                  "only); nothing changed")
        return False
    if not _CLAIM:
        cores = sorted(os.sched_getaffinity(0))
        if len(cores) > 1:
            os.sched_setaffinity(0, {_claim_core(cores)})
    return True
