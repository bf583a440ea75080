"""Constraint stabilization: a family (`base.py`), Baumgarte's feedback and projection."""
