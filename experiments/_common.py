"""Helpers shared by the solvability experiments: tables, output files, command line."""

import argparse
import json
from pathlib import Path


def verdict(unique) -> str:
    return "U" if unique else "N"


def format_table(head, rows) -> str:
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    line = "  ".join(f"{{:{w}}}" for w in widths)
    return "\n".join([line.format(*head), line.format(*("-" * w for w in widths)),
                      *(line.format(*map(str, r)) for r in rows)])


def write_outputs(out: Path | None, stem: str, texts: list[str], results: dict) -> None:
    """`<stem>.txt` (the printed tables) and `<stem>.json` (the numbers) in `out`."""
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.txt").write_text("\n".join(texts))
    (out / f"{stem}.json").write_text(json.dumps(results, indent=1))


def run(main, doc: str) -> None:
    """The experiments' command line: `--short`, `--out`."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--short", action="store_true", help="fewer random configurations")
    parser.add_argument("--out", type=Path, default=None, help="folder for the tables (txt, json)")
    args = parser.parse_args()
    main(args.short, args.out)


def save_figure(out: Path | None, name: str, fig) -> Path | None:
    """Save a matplotlib figure as `<out>/<name>.png` (nothing when `out` is None)."""
    if out is None:
        return None
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.png"
    fig.savefig(path, dpi=100)
    return path
