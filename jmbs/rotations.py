"""Rotation helpers (JAX, traceable): planar rotation matrices and unit quaternions
`(w, x, y, z)`, the conventions of the models' coordinates."""

from ._rotations import quat_exp as quat_exp
from ._rotations import quat_multiply as quat_multiply
from ._rotations import quat_to_rot as quat_to_rot
from ._rotations import rot2 as rot2
from ._rotations import rot_to_quat as rot_to_quat

__all__ = ["quat_exp", "quat_multiply", "quat_to_rot", "rot2", "rot_to_quat"]
