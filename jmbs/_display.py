"""Short summaries of models and results for the terminal and notebooks (host-only).

Each result prints as a few lines (`str`), shows as one line (`repr`) and, in a
notebook, as a small table (`_repr_html_`), instead of a dump of its arrays. A
value that is traced (inside `jax.jit` or `jax.vmap`) is summarised by its shapes.
"""

import html
from collections import Counter

import numpy as np

from ._misc import is_traced

# Rows shown in a table before "... and N more".
MAX_ROWS = 12


def counted(kinds) -> str:
    """`"4 revolute, 1 driver"` from a list of kinds (in order of first appearance)."""
    return ", ".join(f"{n} {k}" for k, n in Counter(kinds).items()) or "none"


def html_table(head: list[str], rows: list[list], caption: str = "") -> str:
    """A small HTML table (rows past `MAX_ROWS` summarised)."""
    shown = rows[:MAX_ROWS]
    cells = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                    for r in shown)
    if len(rows) > MAX_ROWS:
        cells += f"<tr><td colspan={len(head)}>... and {len(rows) - MAX_ROWS} more</td></tr>"
    cap = f"<caption style='text-align:left'>{html.escape(caption)}</caption>" if caption else ""
    return ("<table>" + cap + "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head)
            + "</tr>" + cells + "</table>")


def text_table(head: list[str], rows: list[list]) -> list[str]:
    """Aligned text lines (rows past `MAX_ROWS` summarised)."""
    shown = [[str(c) for c in r] for r in rows[:MAX_ROWS]]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *shown)]
    fmt = "  ".join(f"{{:{w}}}" for w in widths)
    lines = [fmt.format(*head)] + [fmt.format(*r) for r in shown]
    if len(rows) > MAX_ROWS:
        lines.append(f"... and {len(rows) - MAX_ROWS} more")
    return lines


# ----- Model -----
def model_line(model) -> str:
    forces = f", {len(model.force_specs)} force elements" if model.force_specs else ""
    return (f"Model({'planar' if model.dim == 2 else 'spatial'}, {model.n_bodies} bodies, "
            f"{len(model.element_specs)} elements{forces}; nq={model.nq}, nv={model.nv}, "
            f"nc={model.nc})")


def _model_rows(model) -> list[list]:
    rows = []
    for spec in model.element_specs:
        info = model.element(spec.name)
        rows.append([spec.name, spec.kind, "-".join(info.bodies), " ".join(spec.components)])
    names = model.body_names + ("ground",)
    for spec in model.force_specs:
        rows.append([spec.name, spec.kind, "-".join(names[i] for i in spec.bodies), "(force)"])
    return rows


def model_text(model) -> str:
    lines = [model_line(model),
             f"bodies: {', '.join(model.body_names[:MAX_ROWS])}"
             + (f", ... ({model.n_bodies})" if model.n_bodies > MAX_ROWS else ""),
             f"elements: {counted(s.kind for s in model.element_specs)}"
             + (f"; forces: {counted(s.kind for s in model.force_specs)}" if model.force_specs else "")]
    return "\n".join(lines + text_table(["name", "type", "bodies", "components"], _model_rows(model)))


def model_html(model) -> str:
    return html_table(["name", "type", "bodies", "components"], _model_rows(model), model_line(model))


# ----- Solution -----
def solution_line(sol) -> str:
    if is_traced(sol.ts, sol.result):
        return f"Solution(traced: ts {tuple(sol.ts.shape)}, q {tuple(sol.q.shape)})"
    ts = np.asarray(sol.ts)
    if ts.ndim > 1:
        ok = np.asarray(sol.ok)
        return (f"Solution(batch of {ok.size} runs x {ts.shape[-1]} saved times, {int(ok.sum())} "
                f"succeeded{'' if ok.all() else ': ' + sol.message})")
    done = ts[np.isfinite(ts)]
    span = f"t = {done[0]:g} .. {done[-1]:g}" if done.size else "no saved state"
    state = "success" if bool(sol.ok) else f"FAILED: {sol.message}"
    viol = np.asarray(sol.violation)
    extra = f", max |Phi| = {np.nanmax(viol):.1e}" if viol.size and np.isfinite(viol).any() else ""
    return f"Solution({ts.size} saved times, {span}, {state}{extra})"


def solution_text(sol) -> str:
    lines = [solution_line(sol)]
    if is_traced(sol.ts) or np.ndim(sol.ts) != 1 or sol.reactions is None:
        return lines[0]
    lines.append(f"q {tuple(sol.q.shape)}, v {tuple(sol.v.shape)}; energy {float(sol.energy[0]):.6g} "
                 f"-> {float(sol.energy[-1]):.6g}")
    lines.append(reactions_text(sol.reactions))
    return "\n".join(lines)


# ----- Reactions -----
def _unique_always(r) -> tuple[list[str], list[str], list[str]]:
    unique = np.asarray(r.unique).reshape(-1, len(r.element_names))
    always, never = unique.all(axis=0), ~unique.any(axis=0)
    names = r.element_names
    return ([n for n, a in zip(names, always) if a], [n for n, a in zip(names, never) if a],
            [n for n, a, b in zip(names, always, never) if not (a or b)])


def reactions_line(r) -> str:
    if is_traced(r.unique):
        return f"Reactions(traced: {len(r.element_names)} elements)"
    states = int(np.prod(np.shape(r.unique)[:-1]))
    unique, never, changing = _unique_always(r)
    where = f"{states} states" if np.ndim(r.unique) > 1 else "one state"
    change = f", {len(changing)} change" if changing else ""
    return (f"Reactions({where}, {len(r.element_names)} elements: {len(unique)} unique, "
            f"{len(never)} not unique{change})")


def reactions_text(r) -> str:
    if is_traced(r.unique):
        return reactions_line(r)
    unique, never, changing = _unique_always(r)
    lines = [reactions_line(r)]
    for label, names in (("unique", unique), ("not unique", never), ("changing", changing)):
        if names:
            shown = ", ".join(names[:MAX_ROWS]) + (" ..." if len(names) > MAX_ROWS else "")
            lines.append(f"  {label}: {shown}")
    return "\n".join(lines)


def reactions_html(r) -> str:
    if is_traced(r.unique):
        return html.escape(reactions_line(r))
    unique = np.asarray(r.unique).reshape(-1, len(r.element_names))
    force = np.asarray(r.forces).reshape(unique.shape[0], len(r.element_names), -1)[-1]
    rows = [[n, "yes" if unique[:, k].all() else "no" if not unique[:, k].any() else "changes",
             np.array2string(force[k], precision=4, suppress_small=True)]
            for k, n in enumerate(r.element_names)]
    return html_table(["element", "unique", "force (last state)"], rows, reactions_line(r))


# ----- Sweep -----
def sweep_line(sw) -> str:
    n_singular = int(np.sum(sw.singular))
    ranks = f"rank {sw.rank.min()}..{sw.rank.max()}" if len(sw) else "empty"
    unique = np.asarray(sw.unique)
    always = int(unique.all(axis=0).sum()) if len(sw) else 0
    return (f"SolvabilitySweep({sw.method}, {len(sw)} configurations, {ranks}, generic rank "
            f"{sw.generic_rank}, {n_singular} singular; {always}/{len(sw.element_names)} elements "
            "unique in every one)")


def sweep_html(sw) -> str:
    unique = np.asarray(sw.unique)
    rows = [[n, f"{int(unique[:, k].sum())}/{len(sw)}"] for k, n in enumerate(sw.element_names)]
    return html_table(["element", "unique in"], rows, sweep_line(sw))
