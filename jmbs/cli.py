"""The `jmbs` command line (host-side only)."""

import argparse
import sys

import numpy as np


def _demo(args: argparse.Namespace) -> int:
    import jmbs

    w = max(map(len, jmbs.examples.ALL)) + 2
    header = f"{'mechanism':<{w}}{'bodies':>7}{'nq':>6}{'nv':>6}{'nc':>6}{'rank C':>8}{'p':>4}{'dof':>5}"
    print(header)
    print("-" * len(header))
    for name, make in jmbs.examples.ALL.items():
        m = make()
        C = np.asarray(jmbs.constraint_matrix(m, m.q0, 0.0))
        rank = int(np.linalg.matrix_rank(C)) if C.size else 0
        print(f"{name:<{w}}{m.n_bodies:>7}{m.nq:>6}{m.nv:>6}{m.nc:>6}{rank:>8}"
              f"{m.nc - rank:>4}{m.nv - rank:>5}")
    print("\np: degree of redundancy (nc - rank C); dof: degrees of freedom (nv - rank C)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jmbs", description="Rigid multibody systems with "
                                     "redundant constraints: which reactions are unique.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="build the bundled mechanisms and print their sizes, "
                          "rank of C, redundancy and degrees of freedom")
    demo.set_defaults(func=_demo)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
