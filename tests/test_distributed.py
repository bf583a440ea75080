"""`jmbs.batch_map` under `jax.distributed`: two local CPU processes (a coordinator on
127.0.0.1, gloo collectives) compute a sweep that equals, bit for bit, the same sweep
in one process; and they both refuse, with the same `ValueError`, calls that differ
between the processes or leave a process without a device."""

import os
import socket
import subprocess
import sys
import textwrap
import time

import jax
import numpy as np
import pytest

import jmbs

# The sweep, run by the workers and by this process: 45 perturbed configurations and
# coupler masses of the four-bar; per element C, the SVD method's decisions on the
# equilibrated C and the reactions of the null-space projection prepared at q0 (SVD,
# QR and LU under vmap). In two processes, chunks of 16 (8 per process: 16 + 16 + 13
# padded to 16); the one-process reference runs chunks of 8, so that every device runs
# the same compiled program on the same 8 elements.
SETUP = textwrap.dedent("""
    import numpy as np
    import jmbs

    model = jmbs.examples.four_bar()
    formulation = jmbs.NullSpaceProjection().prepare(model, model.q0, 0.0)
    rng = np.random.default_rng(7)
    B = 45
    batch = {"q": np.asarray(model.q0) + 0.05 * rng.standard_normal((B, model.nq)),
             "v": rng.standard_normal((B, model.nv)),
             "coupler.mass": rng.uniform(1.0, 3.0, B)}

    def sweep(p):
        m = model.with_params({"coupler.mass": p["coupler.mass"]})
        d = jmbs.solvability_decisions(m, p["q"], 0.0, "svd")
        r = jmbs.reactions(m, p["q"], p["v"], 0.0, formulation=formulation)
        return {"C": jmbs.constraint_matrix(m, p["q"], 0.0), "rank": d.rank,
                "unique": d.component_unique, "criterion": d.component_criterion,
                "margin": d.margin, "v_dot": r.v_dot, "multipliers": r.reactions.multipliers,
                "forces": r.reactions.forces, "torques": r.reactions.torques}
""")

WORKER = textwrap.dedent("""
    import sys
    import jax
    import numpy as np

    process_id, port, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=2,
                               process_id=process_id, initialization_timeout=60,
                               heartbeat_timeout_seconds=30, shutdown_timeout_seconds=20)
    assert jax.process_count() == 2 and jax.process_index() == process_id
    assert len(jax.devices()) == 2 and len(jax.local_devices()) == 1, jax.devices()
    exec(SETUP)

    result = jmbs.batch_map(sweep, batch, chunk_size=16, progress=False)
    np.savez(out, **result)

    other = dict(batch, q=batch["q"].copy())
    other["q"][40, 2] += 1e-9 * process_id   # process 1 changes one number
    try:
        jmbs.batch_map(sweep, other, chunk_size=16, progress=False)
    except ValueError as e:
        print("batch:", e, flush=True)
    try:
        jmbs.batch_map(sweep, batch, chunk_size=16, devices=1, progress=False)
    except ValueError as e:
        print("devices:", e, flush=True)
    print("done", flush=True)
""")

# Run before the workers, with nothing of jmbs: whether this jaxlib and platform can start
# JAX's distributed runtime with gloo CPU collectives at all (a one-process coordinator on
# 127.0.0.1; creating the CPU client builds the gloo collectives). Only its failure skips
# the test; any failure of the two-process run afterwards fails it.
PROBE = textwrap.dedent("""
    import sys
    import jax

    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{sys.argv[1]}", num_processes=1,
                               process_id=0, initialization_timeout=30)
    assert float(jax.numpy.ones(3).sum()) == 3.0, jax.devices()
    jax.distributed.shutdown()
    print("gloo ok", flush=True)
""")


def _backend_unavailable(tmp_path) -> str | None:
    """None if the probe above runs; otherwise its last error line."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k != "JAX_NUM_CPU_DEVICES"}
    env["JAX_PLATFORMS"] = "cpu"
    try:
        r = subprocess.run([sys.executable, str(script), str(_free_port())], capture_output=True,
                           text=True, env=env, cwd=tmp_path, timeout=90)
    except subprocess.TimeoutExpired:
        return "a one-process jax.distributed start with gloo did not finish in 90 s"
    if r.returncode == 0 and "gloo ok" in r.stdout:
        return None
    lines = [line.strip() for line in r.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"return code {r.returncode}"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_workers(tmp_path, timeout: float = 90.0) -> list[tuple[int, str, str]]:
    """Both workers' (return code, stdout, stderr); a failed one stops the other at once."""
    script = tmp_path / "worker.py"
    script.write_text(f"SETUP = {SETUP!r}\n" + WORKER)
    env = {k: v for k, v in os.environ.items() if k != "JAX_NUM_CPU_DEVICES"}
    # One CPU device per process; otherwise the XLA flags of this process, whose programs
    # the workers' results are compared with bit for bit.
    env["XLA_FLAGS"] = " ".join(f for f in os.environ.get("XLA_FLAGS", "").split()
                                if not f.startswith("--xla_force_host_platform_device_count"))
    env["JAX_PLATFORMS"] = "cpu"
    port = _free_port()
    procs, logs = [], []
    for i in range(2):
        out, err = open(tmp_path / f"out{i}.txt", "w+"), open(tmp_path / f"err{i}.txt", "w+")
        logs.append((out, err))
        procs.append(subprocess.Popen([sys.executable, str(script), str(i), str(port),
                                       str(tmp_path / f"result{i}.npz")],
                                      stdout=out, stderr=err, env=env, cwd=tmp_path))
    deadline = time.monotonic() + timeout
    try:
        while any(p.poll() is None for p in procs):
            if any(p.returncode not in (None, 0) for p in procs) or time.monotonic() > deadline:
                break  # a failed worker leaves the other waiting in a collective
            time.sleep(0.1)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
    results = []
    for p, (out, err) in zip(procs, logs):
        out.seek(0), err.seek(0)
        results.append((p.returncode, out.read(), err.read()))
        out.close(), err.close()
    if time.monotonic() > deadline:
        pytest.fail(f"the two processes did not finish in {timeout} s (a hang in jax.distributed?):\n"
                    + "\n".join(e[-3000:] for _, _, e in results))
    return results


def test_two_processes_equal_one_bit_for_bit(tmp_path):
    reason = _backend_unavailable(tmp_path)
    if reason:
        pytest.skip(f"this platform cannot run jax.distributed with gloo CPU collectives: {reason}")
    results = _run_workers(tmp_path)
    for rc, out, err in results:
        if rc != 0:
            pytest.fail(f"a worker failed (return code {rc}):\n{err[-4000:]}")
        assert out.strip().endswith("done"), out

    namespace = {}
    exec(SETUP, namespace)
    one = jmbs.batch_map(namespace["sweep"], namespace["batch"], chunk_size=8, devices=jax.devices()[:1],
                         progress=False)
    assert one["C"].shape == (45, 8, 9) and one["forces"].shape[0] == 45
    assert np.isfinite(one["forces"]).all()
    for i in range(2):
        with np.load(tmp_path / f"result{i}.npz") as two:
            assert sorted(two.files) == sorted(one)
            for key in one:
                a, b = one[key], two[key]
                assert a.dtype == b.dtype and a.shape == b.shape, key
                # bit for bit: the same bytes (NaN payloads and signed zeros included)
                assert a.tobytes() == b.tobytes(), (i, key, np.abs(a - b).max())

    for _, out, _ in results:
        lines = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
        assert "another batch, chunk_size or devices in process(es) [1]" in lines["batch"], out
        assert "same full batch" in lines["batch"]
        assert "no device of process(es) [1]" in lines["devices"], out
