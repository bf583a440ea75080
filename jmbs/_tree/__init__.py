"""The assembly tree: its plan from the body-joint graph (`plan.py`, host), the schedule
of the solve's heights in scanned segments (`schedule.py`, host), the constrained solves
along it (`solve.py`, traced: `M a + C^T lambda = f`, `C a = g` in O(n)) and the
per-height routes of the divide-and-conquer analysis (`routes.py`). Below every analysis
that uses it: the divide-and-conquer uniqueness method and formulation, the projection,
consistent velocities and the kinematics."""
