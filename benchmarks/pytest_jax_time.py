"""Where a test run's time goes: a pytest plugin that sums JAX's compile events per test.

Run the suite with it (cold: an empty compilation cache), then summarise:

    JMBS_TEST_CACHE=/tmp/empty PYTHONPATH=benchmarks .venv/bin/python -m pytest -n 2 \\
        --dist worksteal -p pytest_jax_time tests
    .venv/bin/python benchmarks/pytest_jax_time.py

Each worker writes `/tmp/jax_time.<pid>.json` (`JAX_TIME_OUT` changes the prefix): per
test its wall time, the process's CPU seconds (XLA's compiler threads included) and the
seconds of XLA compilation, tracing and lowering (`jax.monitoring` duration events), and
per compiled program (JAX's function name) the same seconds and the number of
compilations, summed over the worker's tests: the summary's second table, the programs
that cost the suite most.
"""

import collections
import glob
import json
import os
import time

import pytest

EVENTS = {"xla": "/jax/core/compile/backend_compile_duration",
          "trace": "/jax/core/compile/jaxpr_trace_duration",
          "lower": "/jax/core/compile/jaxpr_to_mlir_module_duration"}
PREFIX = os.environ.get("JAX_TIME_OUT", "/tmp/jax_time")
_totals: collections.Counter = collections.Counter()
_rows: list = []
_programs: dict = collections.defaultdict(collections.Counter)
KINDS = {event: kind for kind, event in EVENTS.items()}


def _record(event, duration, fun_name=None, **kwargs):
    _totals.update({event: duration})
    if event in KINDS and fun_name is not None:
        _programs[str(fun_name)].update({KINDS[event]: duration, f"n_{KINDS[event]}": 1})


def pytest_configure(config):
    import jax.monitoring

    jax.monitoring.register_event_duration_secs_listener(_record)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before, start, cpu = dict(_totals), time.perf_counter(), time.process_time()
    yield
    _rows.append((item.nodeid, time.perf_counter() - start,
                  {"cpu": time.process_time() - cpu,
                   **{k: _totals[e] - before.get(e, 0.0) for k, e in EVENTS.items()}}))


def pytest_sessionfinish(session):
    if _rows:
        with open(f"{PREFIX}.{os.getpid()}.json", "w") as f:
            json.dump({"tests": _rows, "programs": _programs}, f)


def summary() -> None:
    runs = [json.load(open(path)) for path in glob.glob(f"{PREFIX}.*.json")]
    rows = [r for run in runs for r in run["tests"]]
    files: dict = collections.defaultdict(collections.Counter)
    for nodeid, wall, parts in rows:
        files[nodeid.split("::")[0]].update({"wall": wall, "tests": 1, **parts})
    total = sum(files.values(), collections.Counter())
    print(f"{'file':44s} {'wall':>7s} {'cpu':>7s} {'xla':>7s} {'trace':>6s} {'lower':>6s} {'rest':>7s} tests")
    for name, c in sorted(files.items(), key=lambda x: -x[1]["wall"]) + [("all", total)]:
        rest = c["wall"] - c["xla"] - c["trace"] - c["lower"]
        print(f"{name:44s} {c['wall']:7.1f} {c['cpu']:7.1f} {c['xla']:7.1f} {c['trace']:6.1f} "
              f"{c['lower']:6.1f} {rest:7.1f} {c['tests']}")
    programs: dict = collections.defaultdict(collections.Counter)
    for run in runs:
        for name, c in run["programs"].items():
            programs[name].update(c)
    print(f"\n{'program':44s} {'xla':>7s} {'trace':>6s} {'lower':>6s} {'compiles':>8s} {'traces':>6s}")
    for name, c in sorted(programs.items(), key=lambda x: -sum(x[1][k] for k in EVENTS))[:40]:
        print(f"{name[:44]:44s} {c['xla']:7.1f} {c['trace']:6.1f} {c['lower']:6.1f} "
              f"{c['n_xla']:8d} {c['n_trace']:6d}")


if __name__ == "__main__":
    summary()
