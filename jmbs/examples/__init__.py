"""Bundled example mechanisms (the papers' and the IFToMM benchmark problems).

Each function returns a built `Model` in its reference configuration; `ALL`
maps a name to each builder that takes no required argument. The papers'
published results and the samplers of their mechanisms are in `jmbs.reproduce`.
"""

from .andrews import andrews_squeezer as andrews_squeezer
from .basic import BRICARD_AXES as BRICARD_AXES
from .basic import BRICARD_POINTS as BRICARD_POINTS
from .basic import bricard as bricard
from .basic import four_bar as four_bar
from .basic import four_bar_points as four_bar_points
from .basic import frame_x_along as frame_x_along
from .basic import n_four_bar as n_four_bar
from .basic import n_four_bar_configuration as n_four_bar_configuration
from .basic import parallelogram as parallelogram
from .basic import pendulum as pendulum
from .basic import planar_rod as planar_rod
from .basic import sarrus as sarrus
from .basic import slider_crank as slider_crank
from .basic import slider_crank_position as slider_crank_position
from .basic import spatial_four_bar as spatial_four_bar
from .basic import spatial_rod as spatial_rod
from .gripper import gripper as gripper
from .gripper import gripper_slide as gripper_slide
from .manipulator import redundant_manipulator as redundant_manipulator
from .mobile_robot import mobile_robot as mobile_robot
from .mobile_robot import mobile_robot_configuration as mobile_robot_configuration
from .mobile_robot import mobile_robot_configurations as mobile_robot_configurations
from .mobile_robot import steering_manoeuvre as steering_manoeuvre
from .mobile_robot import steering_range as steering_range
from .random import random_mechanism as random_mechanism
from .shapes import bar_grid as bar_grid
from .shapes import crank_ladder as crank_ladder
from .shapes import plates_on_legs as plates_on_legs
from .spatial_parallelogram import spatial_parallelogram as spatial_parallelogram
from .wheeled_robot import four_wheeled_robot as four_wheeled_robot

ALL = {
    "pendulum": pendulum,
    "slider_crank": slider_crank,
    "four_bar": four_bar,
    "parallelogram": parallelogram,
    "n_four_bar": n_four_bar,
    "spatial_four_bar": spatial_four_bar,
    "bricard": bricard,
    # Hairer & Wanner's test problem: a spring and a driving torque (force elements).
    "andrews_squeezer": andrews_squeezer,
    # The papers' mechanisms (docs/papers/); their published results are in
    # jmbs.reproduce.papers.
    "mobile_robot": mobile_robot,
    "gripper": gripper,
    "gripper_torque": lambda: gripper("torque"),
    "gripper_overactuated": lambda: gripper("overactuated"),
    "spatial_parallelogram": spatial_parallelogram,
    "redundant_manipulator": redundant_manipulator,
    "redundant_manipulator_overactuated": lambda: redundant_manipulator(overactuated=True),
    # Issue 34: paper 000's robot in space, four wheels rolling on the ground.
    "four_wheeled_robot": four_wheeled_robot,
}
