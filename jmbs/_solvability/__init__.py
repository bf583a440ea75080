"""Reaction solvability (uniqueness) analysis: methods, reports, sweeps."""
