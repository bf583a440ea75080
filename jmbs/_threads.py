"""`jmbs.fair_share()`: XLA:CPU programs that each run on one thread, so that processes
side by side share the cores instead of fighting over them.

XLA's CPU backend splits a program's operations over a thread pool as large as the
machine. jmbs's programs are many small operations in long loops (one integration
step after another): split over the pool, each operation costs a hand-over between
threads, and with two such processes on the same cores every hand-over waits for a
thread the other process holds. One thread per program (and no Eigen pool inside an
operation) leaves each process its share of the cores. Large batched programs
(`jax.vmap` over thousands of designs) lose their intra-op parallelism with it: use
processes (or `jmbs.batch_map` over devices) for those.
"""

import os
import sys
import warnings

FLAGS = ("--xla_cpu_multi_thread_eigen=false", "intra_op_parallelism_threads=1")


def fair_share_flags(flags: str) -> str:
    """`flags` (an `XLA_FLAGS` value) with one thread per XLA:CPU program, unless the
    user chose otherwise for either setting."""
    out = flags.split()
    for flag in FLAGS:
        key = flag.split("=")[0]
        if not any(f.split("=")[0] == key for f in out):
            out.append(flag)
    return " ".join(out)


def fair_share() -> bool:
    """Run every XLA:CPU program of this process on one thread (see the module).

    Call it before the first JAX computation (it sets `XLA_FLAGS`, which XLA reads
    when its CPU backend starts). The `jmbs` command does; `bench_fair_share.py`
    in benchmarks/ measures it. Returns whether it took effect: `False`, with a warning, if the
    backend had already started.
    """
    os.environ["XLA_FLAGS"] = fair_share_flags(os.environ.get("XLA_FLAGS", ""))
    bridge = sys.modules.get("jax._src.xla_bridge")
    if bridge is not None and bridge.backends_are_initialized():
        warnings.warn("jmbs.fair_share: JAX's backend has already started in this process, so "
                      "the thread settings apply only to processes started from it; call "
                      "jmbs.fair_share() before the first JAX computation", stacklevel=2)
        return False
    return True
