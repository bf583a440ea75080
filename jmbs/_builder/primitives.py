"""The builder's joint-primitive methods (`ModelBuilder` inherits them): each calls
`add_joint` with its kind from `jmbs.ELEMENT_TYPES`."""


class JointPrimitives:
    """Joint primitives: single constraints of the usual joints, the parts a joint keeps
    when some of its reaction components are released (see `jmbs.advise`).

    Geometry is given as for every joint: global coordinates in the reference
    configuration; axes and normals are fixed in body i. Components are named in
    the joint frame (`z` along the axis or the normal).
    """

    def add_inline(self, name: str, body_i, body_j, point, axis) -> str:
        """Point on a line: `point` of body j stays on the line through `point` along
        `axis` (fixed in body i). Components `Fx, Fy` (normal to the line); 4 relative dof."""
        return self.add_joint("inline", name, body_i, body_j, point=point, axis=axis)

    def add_inplane(self, name: str, body_i, body_j, point, normal) -> str:
        """Point in a plane: `point` of body j stays in the plane through `point` with
        `normal` (fixed in body i). Component `Fz` (along the normal); 5 relative dof."""
        return self.add_joint("inplane", name, body_i, body_j, point=point, normal=normal)

    def add_orientation(self, name: str, body_i, body_j, point=None) -> str:
        """The relative orientation is fixed, translation free. Components `Mx, My, Mz`
        (global axes in the reference), reported at `point` (default body j's centre of
        mass); 3 relative dof."""
        return self.add_joint("orientation", name, body_i, body_j, point=point)

    def add_parallel_axes(self, name: str, body_i, body_j, axis, point=None) -> str:
        """`axis` of body j stays parallel to `axis` of body i. Components `Mx, My`
        (moments normal to the axis); 4 relative dof."""
        return self.add_joint("parallel_axes", name, body_i, body_j, axis=axis, point=point)

    def add_perpendicular(self, name: str, body_i, body_j, axes, point=None) -> str:
        """`axes[0]` (fixed in body i) stays perpendicular to `axes[1]` (fixed in body j).
        Component `Mz`, the moment about `axes[0] x axes[1]`; 5 relative dof."""
        return self.add_joint("perpendicular", name, body_i, body_j, axes=axes, point=point)

    def add_planar(self, name: str, body_i, body_j, point, normal) -> str:
        """Spatial planar joint: body j slides and turns in the plane through `point`
        with `normal` (fixed in body i). Components `Fz, Mx, My`; 3 relative dof."""
        return self.add_joint("planar", name, body_i, body_j, point=point, normal=normal)

    def add_pin_in_slot(self, name: str, body_i, body_j, point, axis) -> str:
        """Planar pin in a slot: `point` of body j slides along the slot through `point`
        along `axis` (fixed in body i) and turns freely. Component `Fn` (normal to the
        slot); 2 relative dof."""
        return self.add_joint("pin_in_slot", name, body_i, body_j, point=point, axis=axis)

    def add_general_joint(self, name: str, body_i, body_j, point, components, axes=None) -> str:
        """Any subset of a frame joint's rows: `components` (e.g. `("Fx", "Fz", "Mx", "My")`,
        a revolute about z whose pin slides in a slot along y) from `Fx, Fy, Fz` (the
        joint-point separation) and `Mx, My, Mz` (the orientation lock) in the joint
        frame `(x, y, x × y)` of `axes` (two perpendicular directions fixed in body i;
        default the global axes). `Mx`, `My` keep the `z` axes aligned, `Mz` locks the
        rotation about z. Spatial only; 6 − len(components) relative dof."""
        return self.add_joint("general", name, body_i, body_j, components=components, point=point,
                              axes=axes)
