"""Dynamics formulations: one file per member, `base.py` for the shared parts."""
