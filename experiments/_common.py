"""Helpers shared by the experiments: tables, output files, figures, command line."""

import argparse
import json
from pathlib import Path

from jmbs.reproduce import papers
from jmbs.reproduce.papers import verdict as verdict


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


def paper_table(table, model) -> tuple[str, dict]:
    """A kinetostatic table of paper 003 (`jmbs.reproduce.papers.Table`) next to jmbs's
    kinetostatic analysis at the reference."""
    rep, obtained = papers.kinetostatic_comparison(model, table)
    shape = (model.nv, model.nc)  # the size of A: equations x unknowns
    rows, matches = [], {}
    for el, entry in table.elements.items():
        o = obtained[el]
        matches[el] = o.verdict == entry.verdict and o.set_rank == entry.set_rank
        rows.append([el, entry.criterion, f"{o.criterion:.1e}", f"{entry.set_rank} (full)",
                     f"{o.set_rank}/{len(model.element(el).components)}", entry.verdict,
                     o.verdict, "yes" if matches[el] else "NO"])
    text = (f"{table.title}: paper A {table.shape[0]} x {table.shape[1]}, rank {table.rank}; "
            f"jmbs A {shape[0]} x {shape[1]}, rank {rep.rank} (rank margin "
            f"{rep.rank_margin:.1f} digits)\n")
    text += format_table(["element", "paper criterion", "jmbs criterion", "paper rank A_S",
                          "jmbs rank A_S", "paper", "jmbs", "match"], rows)
    result = {"shape": list(shape), "rank": rep.rank, "paper_rank": table.rank,
              "unique": {el: o.verdict == "U" for el, o in obtained.items()},
              "set_rank": {el: o.set_rank for el, o in obtained.items()},
              "matches": bool(all(matches.values()) and rep.rank == table.rank
                              and shape == tuple(table.shape))}
    return text, result
