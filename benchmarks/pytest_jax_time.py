"""Where a test run's time goes: a pytest plugin that sums JAX's compile events per test.

Run the suite with it (cold: an empty compilation cache), then summarise:

    JMBS_TEST_CACHE=/tmp/empty PYTHONPATH=benchmarks .venv/bin/python -m pytest -n 2 \\
        --dist worksteal -p pytest_jax_time tests
    .venv/bin/python benchmarks/pytest_jax_time.py

Each worker writes `/tmp/jax_time.<pid>.json` (`JAX_TIME_OUT` changes the prefix): per
test its wall time and the seconds of XLA compilation, tracing and lowering
(`jax.monitoring` duration events).
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


def pytest_configure(config):
    import jax.monitoring

    jax.monitoring.register_event_duration_secs_listener(
        lambda event, duration, **kwargs: _totals.update({event: duration}))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before, start = dict(_totals), time.perf_counter()
    yield
    _rows.append((item.nodeid, time.perf_counter() - start,
                  {k: _totals[e] - before.get(e, 0.0) for k, e in EVENTS.items()}))



def pytest_sessionfinish(session):
    if _rows:
        with open(f"{PREFIX}.{os.getpid()}.json", "w") as f:
            json.dump(_rows, f)


def summary() -> None:
    rows = [r for path in glob.glob(f"{PREFIX}.*.json") for r in json.load(open(path))]
    files: dict = collections.defaultdict(collections.Counter)
    for nodeid, wall, parts in rows:
        files[nodeid.split("::")[0]].update({"wall": wall, "tests": 1, **parts})
    total = sum(files.values(), collections.Counter())
    print(f"{'file':44s} {'wall':>7s} {'xla':>7s} {'trace':>6s} {'lower':>6s} {'rest':>7s} tests")
    for name, c in sorted(files.items(), key=lambda x: -x[1]["wall"]) + [("all", total)]:
        rest = c["wall"] - c["xla"] - c["trace"] - c["lower"]
        print(f"{name:44s} {c['wall']:7.1f} {c['xla']:7.1f} {c['trace']:6.1f} {c['lower']:6.1f} "
              f"{rest:7.1f} {c['tests']}")


if __name__ == "__main__":
    summary()
