"""The `jmbs` command line (host-side only)."""

import argparse
import sys


def _demo(args: argparse.Namespace) -> int:
    import jmbs

    w = max(map(len, jmbs.examples.ALL)) + 2
    header = (f"{'mechanism':<{w}}{'bodies':>7}{'nq':>6}{'nv':>6}{'nc':>6}{'rank C':>8}{'p':>4}"
              f"{'dof':>5}  not unique")
    print(header)
    print("-" * len(header))
    for name, make in jmbs.examples.ALL.items():
        m = make()
        rep = jmbs.solvability(m)
        loose = [e for e in m.element_names if not rep.is_unique(e)]
        listed = ",".join(loose) if len(loose) <= 8 else f"{len(loose)}_of_{len(m.element_names)}"
        print(f"{name:<{w}}{m.n_bodies:>7}{m.nq:>6}{m.nv:>6}{m.nc:>6}{rep.rank:>8}"
              f"{rep.redundancy:>4}{rep.dof:>5}  {listed or '-'}")
    print("\np: degree of redundancy (nc - rank C); dof: degrees of freedom (nv - rank C);\n"
          "not unique: elements whose reaction the rigid model does not determine "
          "(jmbs.solvability)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jmbs", description="Rigid multibody systems with "
                                     "redundant constraints: which reactions are unique.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="build the bundled mechanisms and print their sizes, "
                          "rank of C, redundancy, degrees of freedom and non-unique reactions")
    demo.set_defaults(func=_demo)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
