"""Fixed-step integration: paper 002's regularized semi-implicit Euler."""
