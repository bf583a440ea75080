"""`jmbs demo`: the papers' central results reproduced on the bundled mechanisms, as a
report (`run_demo`). One module per section; `report` holds what they share."""

from pathlib import Path

from . import (
    andrews,
    gripper,
    loops,
    manipulator,
    mobile_robot,
    slider_crank,
    spatial_parallelogram,
    stepper,
)
from . import report as report
from .report import Check as Check

# In report order.
SECTIONS = tuple(m.section for m in (mobile_robot, gripper, spatial_parallelogram, manipulator,
                                     loops, stepper, slider_crank, andrews))


def run_demo(out: Path, *, short: bool = False, progress: bool = True) -> Path:
    """Reproduce the papers' central results on the bundled mechanisms and write a report
    to the folder `out` (see `report.run_demo`); returns the path of `report.md`."""
    return report.run_demo(out, SECTIONS, short=short, progress=progress)
