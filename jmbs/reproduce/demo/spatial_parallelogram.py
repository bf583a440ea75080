"""Paper 001, §4: the spatial parallelogram with a triple pendulum."""

import numpy as np

import jmbs

from ..._linalg import numerical_rank
from .. import papers
from .report import Figures, Section, changing, check, checks_table, ground_resultant, mark, table


def section(figs: Figures, short: bool) -> Section:
    sec = Section("Spatial parallelogram with a triple pendulum", ("001",),
                   "spatial parallelogram + triple pendulum (10 bodies)")
    model = jmbs.examples.spatial_parallelogram()
    rep = jmbs.solvability(model)
    ground = papers.SPATIAL_PARALLELOGRAM_GROUND
    C = np.asarray(jmbs.constraint_matrix(model, model.q0))
    in_ground = np.zeros(model.nc, bool)
    for j in ground:
        in_ground[model.rows(j)] = True
    # The paper's symmetric ground-connection matrix (relative coordinates) has the
    # absolute-coordinate counterpart G = C_G V_I V_I^T C_G^T (V_I: null space of the
    # other joints' rows), of size = the ground rows and rank = rank C - rank C_I.
    G = [int(in_ground.sum()), numerical_rank(C) - numerical_rank(C[~in_ground])]
    change, each = ground_resultant(rep, ground)
    sec.text.append(
        "**Mechanism** (`jmbs.examples.spatial_parallelogram`): rods 1–4 parallel (ground joints "
        "A, C, E, G; platform joints B, D, F, H), rods 5–6 parallel in a second direction "
        "(ground K, M; platform L, N), platform 7 and a pendulum 7–8–9–10 through P, Q, R; "
        "15 spherical joints, θ = π/12.\n\n"
        "**The paper** analyses it in relative coordinates by divide and conquer: the platform's "
        "multijoint connection to the ground gives an 18 × 18 symmetric matrix of rank 17; the "
        "reactions of A–H are not unique, those of K, L, M, N, P, Q, R are. jmbs works in "
        "absolute coordinates; uniqueness does not depend on the coordinates, so the "
        "classification must be the same.")
    structure = sec.add(
        check("ground-connection matrix: size, rank", list(papers.SPATIAL_PARALLELOGRAM_GROUND_MATRIX), G),
        check("degree of redundancy p (18 − 17)", 1, rep.redundancy))
    rows = []
    for el, paper in papers.SPATIAL_PARALLELOGRAM.items():
        (c,) = sec.add(check(f"reaction of {el}", paper, rep.verdict(el)))
        rows.append([el, "–".join(model.element(el).bodies), paper, c.obtained,
                     f"{min(rep.margin(el), 99):.1f}", mark(c.passed)])
    resultant = sec.add(check("resultant of the ground joints on the ground (rep.is_unique_resultant), "
                              "criterion", "< 1e-12", change, change < 1e-12))
    sec.text += [
        f"**jmbs** (`jmbs.solvability(model)`, null-space method): rank {rep.rank} of {model.nc} rows, "
        f"p = {rep.redundancy}, rank margin {rep.rank_margin:.1f} digits. The ground-connection "
        "matrix's absolute-coordinate counterpart `G = C_G V_I V_I^T C_G^T` has as many rows "
        "as the ground joints and rank `rank C − rank C_I`:",
        checks_table(structure),
        table(["joint", "bodies", "paper", "jmbs", "margin [digits]", ""], rows),
        "Beyond the paper: the wrench the ground receives. The wrenches of "
        f"{changing(each)} on the ground are not unique one by one (criterion in brackets), their "
        "resultant is (`rep.is_unique_resultant(ground_joints, \"ground\")`): what a force plate "
        "under the mechanism measures is unique, as in any "
        "mechanism (it balances the weights and inertia forces, which the motion fixes). "
        "(`SolvabilityReport.is_unique_group` answers another question: whether the group's "
        "generalized force on the moving bodies is unique; it acts on six different rods, so it is "
        "unique only if each of its joints is.)",
        checks_table(resultant)]
    fig = figs.plt.figure(figsize=(7, 6))
    jmbs.plotting.plot_mechanism(model, report=rep, ax=fig.add_subplot(projection="3d"))
    sec.text.append(figs.save(fig, "spatial_parallelogram", "Spatial parallelogram: joints coloured by "
                                                            "the uniqueness of their reactions."))
    sec.results = {"rank": rep.rank, "redundancy": rep.redundancy, "ground_matrix": G,
                   "unique": {el: rep.is_unique(el) for el in papers.SPATIAL_PARALLELOGRAM},
                   "ground_resultant_change": change, "ground_joint_change": each}
    return sec
