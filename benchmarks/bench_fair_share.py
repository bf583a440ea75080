"""Two processes side by side: a warm 5 s Bricard run alone and beside a second process
running the same, with XLA:CPU's default thread pool and with `jmbs.fair_share()`.

    python benchmarks/bench_fair_share.py [--runs 7] [--json PATH]

Each child compiles, waits for its sibling (a file barrier), then times `--runs` warm
runs; the medians are printed, and the ratio alone / side by side (the share of its
alone-speed a process keeps; 0.5 is a fair half of the cores when both are busy).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def child(barrier: Path, n_peers: int, runs: int, fair: bool) -> None:
    if fair:
        import jmbs
        jmbs.fair_share()
    import jax.numpy as jnp

    import jmbs
    model = jmbs.examples.bricard()
    ts = jnp.linspace(0.0, 5.0, 101)
    jmbs.simulate(model, 5.0, saveat=ts)  # compile
    (barrier / f"{os.getpid()}").touch()
    while len(list(barrier.iterdir())) < n_peers:
        time.sleep(0.05)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        jmbs.simulate(model, 5.0, saveat=ts).q.block_until_ready()
        times.append(time.perf_counter() - t)
    print(json.dumps(times))


def measure(n: int, runs: int, fair: bool) -> list[float]:
    with tempfile.TemporaryDirectory() as barrier:
        cmd = [sys.executable, __file__, "--child", barrier, "--peers", str(n), "--runs", str(runs)]
        procs = [subprocess.Popen(cmd + (["--fair"] if fair else []), stdout=subprocess.PIPE,
                                  text=True) for _ in range(n)]
        return [statistics.median(json.loads(p.communicate()[0].strip().splitlines()[-1]))
                for p in procs]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--peers", type=int, default=1)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--fair", action="store_true")
    ap.add_argument("--json", default=None, help="also write the results to this file")
    a = ap.parse_args()
    if a.child:
        return child(Path(a.child), a.peers, a.runs, a.fair)
    results = {}
    for fair in (False, True):
        alone = measure(1, a.runs, fair)[0]
        pair = measure(2, a.runs, fair)
        name = "fair_share" if fair else "default"
        results[name] = {"alone_s": alone, "pair_s": pair, "kept": alone / max(pair)}
        print(f"{name:10s}: alone {alone:.3f} s, side by side {pair[0]:.3f} / {pair[1]:.3f} s; kept "
              f"{results[name]['kept']:.2f} of the alone-speed (median of {a.runs} warm 5 s runs)",
              flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
