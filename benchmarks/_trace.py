"""`--trace DIR` of the benchmark scripts: run a call under JAX's profiler and print its
costliest operations (device kernels and host work, summed by name), keeping the Perfetto
trace as `DIR/perfetto_trace.json.gz` (open it in ui.perfetto.dev)."""

import collections
import glob
import gzip
import json
import os
import shutil
import tempfile

import jax


def trace(call, out_dir: str, title: str, top: int = 25) -> None:
    """Run `call()` once under the profiler (warm it up first) and print the `top`
    operations by total time, with their number of calls and where they ran."""
    log = tempfile.mkdtemp()
    with jax.profiler.trace(log, create_perfetto_trace=True):
        jax.block_until_ready(call())
    path = glob.glob(f"{log}/**/perfetto_trace.json.gz", recursive=True)[0]
    os.makedirs(out_dir, exist_ok=True)
    shutil.copy(path, os.path.join(out_dir, "perfetto_trace.json.gz"))
    events = json.load(gzip.open(path))
    events = events["traceEvents"] if isinstance(events, dict) else events
    names = {e["pid"]: e["args"].get("name", "") for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    total, count = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("ph") == "X" and not e["name"].startswith("$"):  # "$file:line": Python frames
            key = (names.get(e["pid"], "?")[:24], e["name"][:70])
            total[key] += e.get("dur", 0.0)
            count[key] += 1
    print(f"trace of {title}: top {top} operations (ms, calls)")
    for key, us in total.most_common(top):
        print(f"  {us / 1e3:9.2f} {count[key]:6d}  {key[0]}  {key[1]}", flush=True)
