"""Fixed-step integration: paper 002's regularized semi-implicit Euler (the step, pure and
traceable; `jmbs/_simulate/fixed_step.py` runs it for `jmbs.simulate`)."""
