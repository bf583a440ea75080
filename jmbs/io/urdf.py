"""URDF files in URDF words, for `jmbs.from_urdf` (host-side only).

MuJoCo's compiler reads URDF and `from_urdf` maps its compiled model as `from_mjcf` does
(`io/mjcf.py`). This module reads the URDF's own structure (links, joints, the root) and
says what goes wrong in the URDF's terms: MuJoCo's compile errors name "bodies" and
"elements", and a robot whose links cannot move compiles into an empty world.
"""

import difflib
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["URDFRobot", "compile_urdf", "is_urdf", "read_urdf"]

# URDF joint types that MuJoCo maps to one joint with one coordinate.
ONE_COORDINATE = ("revolute", "continuous", "prismatic")


@dataclass
class URDFRobot:
    """A URDF robot's tree, as the file writes it: for messages and checks only."""

    label: str
    name: str
    links: list[str] = field(default_factory=list)
    joints: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # name -> (type, parent, child)

    @property
    def roots(self) -> list[str]:
        children = {child for _, _, child in self.joints.values()}
        return [link for link in self.links if link not in children]

    def joint_of(self, link: str) -> str | None:
        """The joint whose child is `link`."""
        return next((j for j, (_, _, child) in self.joints.items() if child == link), None)

    def fused(self) -> list[tuple[str, str, str]]:
        """`(link, fixed joint, the link it is part of)` for each link on a fixed joint: the
        nearest ancestor that moves, or the root."""
        out = []
        for joint, (kind, parent, child) in self.joints.items():
            if kind != "fixed":
                continue
            carrier = parent
            while (j := self.joint_of(carrier)) is not None and self.joints[j][0] == "fixed":
                carrier = self.joints[j][1]
            out.append((child, joint, carrier))
        return out

    def check_tree(self) -> None:
        """One root, every joint between known links, something that moves."""
        where = f"{self.label}: robot {self.name!r}"
        if not self.links:
            raise ValueError(f"{where} has no <link>; a robot needs a root link and at least one "
                             "<joint> to a child link with an <inertial>")
        for j, (_, parent, child) in self.joints.items():
            for role, link in (("parent", parent), ("child", child)):
                if link not in self.links:
                    close = difflib.get_close_matches(link, self.links, n=1)
                    hint = f"did you mean {close[0]!r}?" if close else f"links: {', '.join(self.links)}"
                    raise ValueError(f"{self.label}: URDF joint {j!r}: its {role} link {link!r} is no "
                                     f"<link> of the robot; {hint}")
        roots = self.roots
        if len(roots) != 1:
            raise ValueError(
                f"{where} has {len(roots)} root links ({', '.join(roots) or 'none: the joints form a '
                'loop'}); a URDF robot is a tree with one root: join the others to it with <joint>s")
        if not any(kind != "fixed" for kind, _, _ in self.joints.values()):
            fixed = f" and only fixed joints ({', '.join(self.joints)})" if self.joints else " and no joint"
            raise ValueError(
                f"{where}: no link can move: it has {len(self.links)} link(s) ({', '.join(self.links)})"
                f"{fixed}, and the root link {roots[0]!r} is fixed to the world; add a revolute, "
                "continuous or prismatic <joint> from it to a child <link> with an <inertial>")
        for j, (kind, parent, child) in self.joints.items():
            if kind == "planar":
                raise ValueError(
                    f"{self.label}: URDF joint {j!r} ({parent} -> {child}) is planar: jmbs has no planar "
                    "joint between two links (MuJoCo makes it two slides and a hinge on one link); "
                    "use two prismatic joints and a revolute one through massive intermediate links")
            if kind not in ONE_COORDINATE + ("fixed", "floating"):
                raise ValueError(f"{self.label}: URDF joint {j!r} has the unknown type {kind!r}; "
                                 f"types: {', '.join(ONE_COORDINATE + ('fixed', 'floating', 'planar'))}")


def is_urdf(source) -> bool:
    """Whether `source` (a path or XML text) is a URDF file: a `.urdf` suffix or a `<robot>` root."""
    text = str(source)
    if text.lstrip().startswith("<"):
        return re.search(r"<\s*robot[\s>]", text) is not None and "<mujoco" not in text.split("<robot")[0]
    return Path(text).suffix.lower() == ".urdf"


def read_urdf(source) -> tuple[URDFRobot, str]:
    """The robot's tree and the URDF text, from a path or the text itself."""
    text = str(source)
    if text.lstrip().startswith("<"):
        label = "URDF"
    else:
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"{source}: no such file (give a URDF path or the XML text)")
        label, text = str(path), path.read_text()
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise ValueError(f"{label}: not a well-formed URDF (XML) file: {e}") from None
    if root.tag != "robot":
        other = " (MJCF: read it with jmbs.from_mjcf)" if root.tag == "mujoco" else ""
        raise ValueError(f"{label}: the root element is <{root.tag}>, not <robot>: not a URDF "
                         f"file{other}")
    robot = URDFRobot(label, root.get("name", "?"), [link.get("name", "") for link in root.findall("link")])
    for k, j in enumerate(root.findall("joint")):
        name = j.get("name") or f"joint{k}"
        parent, child = (getattr(j.find(tag), "attrib", {}).get("link", "") for tag in ("parent", "child"))
        robot.joints[name] = (j.get("type", ""), parent, child)
    return robot, text


def compile_urdf(mujoco, source, robot: URDFRobot):
    """MuJoCo's compiled model of the URDF, its compile errors said in URDF words."""
    try:
        if str(source).lstrip().startswith("<"):
            return mujoco.MjModel.from_xml_string(str(source))
        return mujoco.MjModel.from_xml_path(str(source))
    except ValueError as e:
        raise ValueError(_in_urdf_words(str(e), robot)) from None


def _in_urdf_words(message: str, robot: URDFRobot) -> str:
    found = re.search(r"Element name '([^']*)'", message)
    link = found.group(1) if found else "?"
    joint = robot.joint_of(link)
    via = f" (URDF joint {joint!r})" if joint else ""
    where = f"{robot.label}: URDF link {link!r}"
    if "mass and inertia of moving bodies" in message:
        return (f"{where} moves{via} but has no mass: give it an <inertial> with a <mass value> > 0 "
                "and an <inertia>")
    if "inertia must satisfy" in message:
        return (f"{where}: its <inertia> is no rigid body's: the principal moments A, B, C must "
                "satisfy A + B >= C; correct ixx, iyy, izz (and the products)")
    if "free joint can only be used on top level" in message:
        parent = robot.joints[joint][1] if joint else "?"
        return (f"{robot.label}: URDF joint {joint!r} is floating, but its parent link {parent!r} is not "
                "the root: a link floats only from the root link (fixed to the world)")
    missing = re.search(r"Error opening file '([^']*)'", message)
    if missing:
        package = (" and does not resolve 'package://': write the filename as a path relative to "
                   "the URDF file" if missing.group(1).startswith("package:") else
                   ": put the mesh there, or correct the filename")
        return (f"{robot.label}: mesh file {missing.group(1)!r} not found: MuJoCo reads mesh "
                f"filenames relative to the URDF file's folder{package}")
    first = next((line.strip() for line in message.splitlines() if line.strip()), message)
    return f"{robot.label}: MuJoCo cannot compile the URDF: {first.removeprefix('Error: ')}"
