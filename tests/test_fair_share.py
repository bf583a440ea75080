"""`jmbs.fair_share()`: one thread per XLA:CPU program, set before the backend starts."""

import os
import subprocess
import sys

CODE = """
import os, warnings, jmbs
warnings.simplefilter("error")
assert jmbs.fair_share() is True
print(os.environ["XLA_FLAGS"])
import jax.numpy as jnp
jnp.ones(2).block_until_ready()            # the backend starts with the flags
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    assert jmbs.fair_share() is False      # too late for this process: says so
assert "already started" in str(w[0].message)
"""


def test_fair_share_sets_the_flags_before_the_backend_starts_and_warns_after():
    env = dict(os.environ, XLA_FLAGS="--xla_backend_optimization_level=0 intra_op_parallelism_threads=2")
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    # The user's own thread count is kept; the Eigen pool is turned off; other flags stay.
    assert out == ["--xla_backend_optimization_level=0", "intra_op_parallelism_threads=2",
                   "--xla_cpu_multi_thread_eigen=false"]


def test_the_command_line_runs_fair():
    """`jmbs` in a fresh process sets the flags before its first computation."""
    code = "import os, jmbs.cli; jmbs.cli.main(['--help']); print(os.environ['XLA_FLAGS'])"
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=False).stdout.splitlines()[-1]
    assert out.split() == ["--xla_cpu_multi_thread_eigen=false", "intra_op_parallelism_threads=1"]
