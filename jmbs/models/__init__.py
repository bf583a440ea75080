"""Model files of the bundled mechanisms (`jmbs.load(name)`); written by `python -m jmbs.models.generate` from `jmbs.examples`."""
