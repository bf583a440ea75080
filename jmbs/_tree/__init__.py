"""The assembly tree: its plan from the body-joint graph (`plan.py`, host) and the
constrained solves along it (`solve.py`, traced: `M a + C^T lambda = f`, `C a = g` in
O(n)). Below every analysis that uses it: the divide-and-conquer uniqueness method and
formulation, the projection, consistent velocities and the kinematics."""
