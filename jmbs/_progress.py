"""Progress bars (tqdm): widgets in Jupyter where ipywidgets is installed, text elsewhere;
importing jmbs in a kernel without ipywidgets prints nothing."""

import warnings

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="IProgress not found")
    from tqdm.auto import tqdm

__all__ = ["tqdm"]
