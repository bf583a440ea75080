"""`jmbs.fair_share()`: each process on a core no other such process holds, set before
the backend starts."""

import os
import subprocess
import sys

import pytest

CODE = """
import os, sys, time, warnings, jmbs
warnings.simplefilter("error")
assert jmbs.fair_share() is True
print(sorted(os.sched_getaffinity(0)), flush=True)
import jax.numpy as jnp
before = set(os.listdir("/proc/self/task"))
jnp.ones(2).block_until_ready()            # the backend's threads start on that core
new = set(os.listdir("/proc/self/task")) - before
assert new and all(os.sched_getaffinity(int(t)) == os.sched_getaffinity(0) for t in new)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    assert jmbs.fair_share() is False      # too late for this process: says so
assert "already started" in str(w[0].message)
sys.stdin.read()                           # hold the core until the test lets go
"""

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity")
                                or len(os.sched_getaffinity(0)) < 2,
                                reason="needs a system that sets a process's cores, with two")


def test_two_processes_side_by_side_take_different_cores(tmp_path):
    # Their own folder of core locks: other jmbs processes of the suite (the command
    # line's tests, the other worker) hold cores in the shared one.
    env = dict(os.environ, TMPDIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", CODE], stdin=subprocess.PIPE, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    try:
        cores = [p.stdout.readline().strip() for p in procs]
    finally:
        results = [p.communicate("") for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-2000:] for _, err in results]
    (a,), (b,) = (eval(c) for c in cores)  # noqa: S307 (a printed list of ints)
    assert a != b and {a, b} <= os.sched_getaffinity(0)


def test_the_command_line_runs_on_one_core():
    """`jmbs` in a fresh process takes its core before its first computation."""
    code = ("import os, jmbs.cli; jmbs.cli.main(['--help']); "
            "print(len(os.sched_getaffinity(0)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False).stdout.splitlines()[-1]
    assert out == "1"
