"""Force elements (see `base.py`); the table of kinds is `registry.py`."""
