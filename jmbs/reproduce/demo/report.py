"""The `jmbs demo` report: checks, Markdown tables, figures, and `run_demo`, which runs
the sections (one module each in this package) and writes the report.

`run_demo(out, sections)` writes `out/report.md` (one section per paper: the
mechanism, what the paper reports, what jmbs obtains, whether they match, figures),
the figures under `out/figures/`, and `out/results.json` (every number and every
check with its expected and obtained value, and `all_passed`). Host-side only.
"""

import dataclasses
import datetime
import importlib.metadata
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

import jmbs

from .. import papers

# The name models give the ground (model files reserve it).
GROUND = "ground"

DPI = 90


@dataclasses.dataclass
class Check:
    """One comparison: the paper's (or the closed form's) value and jmbs's."""

    name: str
    expected: Any
    obtained: Any
    passed: bool


def check(name: str, expected, obtained, passed: bool | None = None) -> Check:
    """A check that passes when `expected == obtained`, unless `passed` says otherwise
    (tolerances: `expected` is then a description such as `"< 1e-10"`)."""
    return Check(name, expected, obtained, expected == obtained if passed is None else bool(passed))


@dataclasses.dataclass
class Section:
    title: str
    cites: tuple[str, ...]  # keys of `papers.PAPERS`; none for a check against a closed form
    mechanism: str
    text: list[str] = dataclasses.field(default_factory=list)  # Markdown blocks
    checks: list[Check] = dataclasses.field(default_factory=list)
    results: dict = dataclasses.field(default_factory=dict)
    seconds: float = 0.0

    def add(self, *checks: Check) -> list[Check]:
        self.checks.extend(checks)
        return list(checks)


class Figures:
    """Saves figures as `figures/<name>.png` and returns the Markdown that shows them."""

    def __init__(self, folder: Path):
        import matplotlib.pyplot as plt

        self.plt, self.folder = plt, folder
        folder.mkdir(parents=True, exist_ok=True)

    def save(self, fig, name: str, caption: str) -> str:
        fig.savefig(self.folder / f"{name}.png", dpi=DPI, bbox_inches="tight")
        self.plt.close(fig)
        return f"![{caption}](figures/{name}.png)\n\n*{caption}*"


# ----- Markdown -----

def mark(passed: bool) -> str:
    return "✅ matches" if passed else "❌ **differs**"


def _fmt(x) -> str:
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.2e}" if x != 0 and not 1e-3 <= abs(x) < 1e4 else f"{x:.6g}"
    if isinstance(x, dict):
        return ", ".join(f"{k}: {_fmt(v)}" for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(map(_fmt, x)) + "]"
    return str(x)


def table(head: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(_fmt(c).replace("|", "\\|") for c in row) + " |"
                               for row in rows])


def checks_table(checks: list[Check]) -> str:
    return table(["check", "expected", "jmbs", ""],
                  [[c.name, c.expected, c.obtained, mark(c.passed)] for c in checks])


# ----- helpers shared by the sections -----

def ground_resultant(rep: jmbs.SolvabilityReport, joints) -> tuple[float, dict[str, float]]:
    """The uniqueness criterion of the resultant wrench that the ground `joints` exert on
    the ground together (`rep.resultant_margin`: 0 where unique), and of each joint's
    alone."""
    each = {j: rep.resultant_margin([j], GROUND)[1] for j in joints}
    return rep.resultant_margin(list(joints), GROUND)[1], each


def changing(each: dict[str, float]) -> str:
    """The joints whose wrench is not unique, with their criterion, e.g. `"J1 (0.12)"`."""
    return ", ".join(f"{j} ({c:.2g})" for j, c in each.items() if c > 1e-12)


def kinetostatic_tables(sec: Section, tables: dict[str, papers.Table]) -> dict:
    """The paper's kinetostatic tables next to jmbs's (`method="kinetostatic"`, at the
    paper's configuration): the size and rank of `A`, and per element the rank of
    `A_S` and the verdict. Returns the reports by mechanism name."""
    reports = {}
    for name, paper in tables.items():
        model = jmbs.examples.ALL[name]()
        rep, obtained = papers.kinetostatic_comparison(model, paper)
        reports[name] = rep
        size = sec.add(check(f"{paper.title}: size of A", list(paper.shape), [model.nv, model.nc]),
                       check(f"{paper.title}: rank of A", paper.rank, rep.rank))
        rows, result = [], {}
        for el, entry in paper.elements.items():
            o = obtained[el]
            got = {"verdict": o.verdict, "rank A_S": o.set_rank}
            (c,) = sec.add(check(f"{paper.title}: {el}", {"verdict": entry.verdict,
                                                           "rank A_S": entry.set_rank}, got))
            rows.append([el, entry.criterion, f"{o.criterion:.1e}", entry.set_rank,
                         o.set_rank, entry.verdict, o.verdict, mark(c.passed)])
            result[el] = {**got, "criterion": o.criterion}
        sec.results[name] = {"shape": [model.nv, model.nc], "rank": rep.rank,
                             "redundancy": rep.redundancy, "elements": result}
        sec.text += [f"**{paper.title}** — `jmbs.examples.ALL[{name!r}]`: A is {model.nv} × "
                     f"{model.nc} (paper {paper.shape[0]} × {paper.shape[1]}), rank {rep.rank} "
                     f"(paper {paper.rank}), rank margin {rep.rank_margin:.1f} digits: "
                     + ("size and rank match." if all(c.passed for c in size) else "**they differ.**"),
                     table(["element", "paper ‖A_S N_S‖", "jmbs ‖A_S N_S‖", "paper rank A_S",
                             "jmbs rank A_S", "paper", "jmbs", ""], rows)]
    return reports


# ----- the report -----

def run_demo(out: Path, sections: Sequence[Callable[["Figures", bool], Section]], *,
             short: bool = False, progress: bool = True) -> Path:
    """Reproduce the papers' central results on the bundled mechanisms and write a report.

    **Arguments:**
    - `out`: folder for `report.md`, `results.json` and `figures/` (created; files
      of an earlier run are overwritten).
    - `sections`: the sections, `(figs, short) -> Section`, in report order.
    - `short`: fewer sweep points and a 1 s instead of a 5 s simulation, no GIF
      (the test suite's mode).
    - `progress`: a progress bar over the sections on stderr.

    **Returns:** the path of `report.md`. `results.json` beside it holds every
    number and check and `"all_passed"` (false when jmbs differs from a paper).
    """
    import matplotlib

    matplotlib.use("Agg")
    import jmbs.plotting  # noqa: F401  (after the backend is chosen)

    out = Path(out)
    figs = Figures(out / "figures")
    start = time.perf_counter()
    done = []
    bar = tqdm(sections, desc="jmbs demo", unit="section", file=sys.stderr, disable=not progress)
    for make in bar:
        bar.set_postfix_str(make.__module__.rpartition(".")[2].replace("_", " "))
        t0 = time.perf_counter()
        sec = make(figs, short)
        sec.seconds = time.perf_counter() - t0
        done.append(sec)
    total = time.perf_counter() - start

    checks = [c for s in done for c in s.checks]
    all_passed = all(c.passed for c in checks)
    version = importlib.metadata.version("jmbs")
    results = {"jmbs": version, "short": short, "all_passed": all_passed, "seconds": round(total, 1),
               "n_checks": len(checks), "n_passed": sum(c.passed for c in checks),
               "sections": [{"title": s.title, "papers": list(s.cites), "mechanism": s.mechanism,
                             "seconds": round(s.seconds, 1), "passed": sum(c.passed for c in s.checks),
                             "total": len(s.checks), "checks": [dataclasses.asdict(c) for c in s.checks],
                             "results": s.results} for s in done]}
    (out / "results.json").write_text(json.dumps(results, indent=1, default=_json))

    def cited(keys: tuple[str, ...]) -> str:
        authors = [papers.PAPERS[k].split(":")[0] for k in keys]
        return "; ".join(f"{k} {a.split(',')[0] + ' et al.' if ',' in a else a}"
                         for k, a in zip(keys, authors)) or "closed form"

    summary = table(["", "section", "paper", "mechanism", "checks", "time [s]"],
                     [["✅" if all(c.passed for c in s.checks) else "❌", f"[{s.title}](#section-{k + 1})",
                       cited(s.cites), s.mechanism, f"{sum(c.passed for c in s.checks)}/{len(s.checks)}",
                       f"{s.seconds:.0f}"] for k, s in enumerate(done)])
    verdict = (f"**All {len(checks)} checks pass.**" if all_passed else
               f"**{len(checks) - results['n_passed']} of {len(checks)} checks differ** (marked ❌).")
    lines = [
        "# jmbs: the papers' results, reproduced", "",
        f"jmbs {version}, {datetime.date.today().isoformat()}, {'short' if short else 'full'} run "
        f"(`jmbs demo`), {total:.0f} s including JIT compilation. {verdict}", "",
        "Each section names the mechanism (all bundled in `jmbs.examples`), what the paper "
        "reports, what jmbs computes, and per item whether they match. **U**: the reaction (or "
        "driving force) is uniquely determined by the rigid model; **N**: it is not — its value "
        "depends on how a solver resolves the redundancy. Margins are the decimal digits "
        "between a decision's criterion and its tolerance. Every number is also in "
        "`results.json`.", "",
        summary, "",
        "Papers: " + "; ".join(f"**{k}** {v}" for k, v in papers.PAPERS.items()) + ".", ""]
    for k, s in enumerate(done):
        heading = f"## {k + 1}. {s.title}" + (f" ({', '.join(s.cites)})" if s.cites else "")
        lines += [f'<a id="section-{k + 1}"></a>', "", heading, "", *(block + "\n" for block in s.text)]
    report = out / "report.md"
    report.write_text("\n".join(lines))
    return report


def _json(x):
    """NumPy scalars and arrays in `results.json`."""
    if isinstance(x, (np.ndarray, np.generic)):
        return x.tolist()
    raise TypeError(f"{type(x).__name__} is not JSON serialisable")
