"""Model files of the bundled mechanisms (`jmbs.load(name)`).

Written from `jmbs.examples` by `python -m jmbs.models.generate`.
"""
