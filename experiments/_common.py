"""Helpers shared by the experiments: tables, output files, figures, command line."""

import argparse
import json
from pathlib import Path

import numpy as np

import jmbs


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


def paper_table(table: tuple, model) -> tuple[str, dict]:
    """A kinetostatic table of paper 003 (`(title, shape of A, rank, {element: (criterion,
    rank A_S, verdict)})`) next to jmbs's kinetostatic analysis at the reference."""
    title, shape, rank, expected = table
    rep = jmbs.solvability(model, method="kinetostatic")
    A = np.asarray(jmbs.kinetostatic_matrix(model, model.q0, 0.0))
    d = rep.decisions
    rows, matches = [], {}
    for el, (crit, rank_s, paper) in expected.items():
        k = model.element_names.index(el)
        size = len(model.element(el).components)
        got = verdict(rep.is_unique(el))
        matches[el] = got == paper and int(d.set_rank[k]) == rank_s
        rows.append([el, crit, f"{float(d.criterion[k]):.1e}", f"{rank_s} (full)",
                     f"{int(d.set_rank[k])}/{size}", paper, got, "yes" if matches[el] else "NO"])
    text = (f"{title}: paper A {shape[0]} x {shape[1]}, rank {rank}; jmbs A {A.shape[0]} x "
            f"{A.shape[1]}, rank {rep.rank} (rank margin {rep.rank_margin:.1f} digits)\n")
    text += format_table(["element", "paper criterion", "jmbs criterion", "paper rank A_S",
                          "jmbs rank A_S", "paper", "jmbs", "match"], rows)
    result = {"shape": list(A.shape), "rank": rep.rank, "paper_rank": rank,
              "unique": {el: rep.is_unique(el) for el in expected},
              "set_rank": {el: int(d.set_rank[model.element_names.index(el)]) for el in expected},
              "matches": bool(all(matches.values()) and rep.rank == rank and A.shape == shape)}
    return text, result
