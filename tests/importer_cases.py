"""Robot files built for the importer tests, shaped like the held-out ones.

- ``rolling_finger.xml`` is built like Menagerie's iit_softfoot: every phalanx body has two
  hinges (a virtual rolling joint and the phalanx joint) coupled by a joint equality
  between the two joints of that one body, the <inertial> written between them, and a
  ``connect`` closing a loop onto the last multi-joint body.
- ``telescope.xml`` is built like Menagerie's hello_robot_stretch: a floating base, a chain
  of joint equalities along telescoping slides (l0 = l1 = l2 = l3), hinge fingers that
  follow a slide (polycoef 10, a revolute follower of a prismatic leader), a tip with two
  hinges and no relation, no <inertial> anywhere (mass from primitive and mesh geoms with
  ``mass`` or ``density``, mesh inertia legacy/exact/convex/shell), contact excludes and
  contype/conaffinity.
- ``softfoot_like.xml``: the iit_softfoot's shape at its size (``softfoot_like``).
- ``textured.urdf``: a link whose visual is a textured OBJ (needs Pillow) and whose colour
  comes from a URDF <material>, and a <collision>.

Meshes are written with trimesh (the ``mesh`` extra); ``write_cases`` returns None without it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

ROLLING_FINGER = """<mujoco model="rolling_finger">
  <compiler angle="radian" autolimits="true"/>
  <default>
    <default class="chain">
      <joint axis="0 0 1" range="-0.2 0.9" armature="0.001" damping="0.04" stiffness="0.05"/>
      <geom type="box" size="0.01 0.008 0.005" pos="0.008 0 0" rgba="0.3 0.3 0.3 1"/>
    </default>
  </default>
  <worldbody>
    <body name="palm" pos="0 0 0.3" quat="0.9238795 0 0.3826834 0">
      <inertial pos="0 0 0" mass="0.4" diaginertia="2e-4 2e-4 1e-4"/>
      <geom type="box" size="0.03 0.03 0.01" rgba="0.9 0.1 0.2 1"/>
      <body name="phalanx1" pos="0.045 0 0">
        <joint name="palm_to_virtual1" class="chain" pos="-0.013 0 0"/>
        <inertial pos="0.006 0.0005 0" quat="0.5 0.5 -0.5 0.5" mass="0.0052" diaginertia="2.8e-7 2.2e-7 1.9e-7"/>
        <joint name="virtual1_to_phalanx1" class="chain" stiffness="0"/>
        <geom class="chain"/>
        <body name="phalanx2" pos="0.022 0 0">
          <joint name="phalanx1_to_virtual2" class="chain" pos="-0.013 0 0"/>
          <inertial pos="0.006 0.0005 0" mass="0.0052" diaginertia="2.8e-7 2.2e-7 1.9e-7"/>
          <joint name="virtual2_to_phalanx2" class="chain"/>
          <geom class="chain"/>
          <body name="tip" pos="0.022 0 0">
            <joint name="phalanx2_to_virtual3" class="chain" pos="-0.013 0 0"/>
            <inertial pos="0.008 0 0" mass="0.007" diaginertia="3.2e-7 4.9e-7 6.3e-7"/>
            <joint name="virtual3_to_tip" class="chain"/>
            <geom class="chain" size="0.014 0.008 0.005"/>
          </body>
        </body>
      </body>
      <body name="arch" pos="0 0 0">
        <inertial pos="0.05 0 0.01" mass="0.07" diaginertia="2e-4 1e-4 1e-4"/>
        <joint name="palm_to_arch" axis="0 0 1" damping="0.001" armature="0.001"/>
        <geom type="capsule" fromto="0 0 0.02 0.089 0 0.02" size="0.004" contype="0" conaffinity="0" group="2"/>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint name="roll1" joint1="palm_to_virtual1" joint2="virtual1_to_phalanx1"/>
    <joint name="roll2" joint1="phalanx1_to_virtual2" joint2="virtual2_to_phalanx2"/>
    <joint name="roll3" joint1="phalanx2_to_virtual3" joint2="virtual3_to_tip" polycoef="0 0.8"/>
    <joint name="curl" joint1="virtual2_to_phalanx2" joint2="virtual1_to_phalanx1" polycoef="0 0.9"/>
    <connect name="arch_to_tip" body1="arch" body2="tip" anchor="0.089 0 0"/>
  </equality>
  <actuator>
    <position name="curl_servo" joint="virtual1_to_phalanx1" kp="0.5" dampratio="1"/>
  </actuator>
</mujoco>
"""

TELESCOPE = """<mujoco model="telescope">
  <compiler angle="radian" autolimits="true" meshdir="meshes"/>
  <default>
    <default class="bot">
      <default class="slide">
        <joint type="slide" axis="0 0 1" damping="5" range="0 0.13" armature="0.01"/>
      </default>
      <default class="visual"><geom type="mesh" contype="0" conaffinity="0" group="2" mass="0"/></default>
      <default class="collision"><geom type="mesh" group="3"/></default>
    </default>
  </default>
  <asset>
    <mesh name="block" file="block.stl" scale="0.5 0.5 0.5"/>
    <mesh name="ell" file="ell.stl"/>
    <mesh name="ell_exact" file="ell.stl" inertia="exact"/>
    <mesh name="ell_convex" file="ell.stl" inertia="convex"/>
    <mesh name="plate" file="plate.obj" inertia="shell" scale="1 1 0.1"/>
    <material name="carbon" rgba="0.06 0.06 0.06 1"/>
  </asset>
  <worldbody>
    <body name="base" childclass="bot" pos="0 0 0.5">
      <freejoint/>
      <geom class="visual" mesh="block" material="carbon"/>
      <geom class="collision" mesh="block" mass="15"/>
      <geom type="sphere" size="0.02" pos="-0.2 0 -0.1" density="800"/>
      <body name="arm_l3" pos="0.2 0 0">
        <joint name="arm_l3" class="slide"/>
        <geom class="visual" mesh="ell" mass="0.16"/>
        <geom class="collision" mesh="ell"/>
        <body name="arm_l2" pos="0 0 0.013">
          <joint name="arm_l2" class="slide"/>
          <geom class="visual" mesh="ell_exact" mass="0.157"/>
          <body name="arm_l1" pos="0 0 0.013">
            <joint name="arm_l1" class="slide"/>
            <geom class="visual" mesh="ell_convex" mass="0.151"/>
            <body name="arm_l0" pos="0 0 0.013">
              <joint name="arm_l0" class="slide"/>
              <geom class="visual" mesh="plate" mass="0.285"/>
              <geom class="collision" type="box" size="0.02 0.02 0.01"/>
              <body name="slider" pos="0.08 0 0">
                <joint name="gripper_slide" type="slide" axis="1 0 0" range="-0.005 0.04" damping="0.1"/>
                <geom class="visual" type="box" size="0.03 0.005 0.005" mass="0.05" rgba="0 0 0 0"/>
                <body name="finger_left" pos="0 0.01 0">
                  <joint name="finger_left_open" axis="0 0 1" range="-0.6 0.6" damping="0.1"/>
                  <geom type="capsule" size="0.005 0.03" pos="0.03 0 0" quat="1 0 1 0" mass="0.038" shellinertia="true"/>
                  <body name="rubber_tip_left" pos="0.07 0 0">
                    <joint name="rubber_left_x" axis="1 0 0" damping="0.001" stiffness="0.05"/>
                    <joint name="rubber_left_y" axis="0 1 0" damping="0.001" stiffness="0.05"/>
                    <geom type="cylinder" size="0.01 0.005" mass="0.005" friction="0.8 0.02 0.01"/>
                  </body>
                </body>
                <body name="finger_right" pos="0 -0.01 0" quat="0 0 0 1">
                  <joint name="finger_right_open" axis="0 0 1" range="-0.6 0.6" damping="0.1"/>
                  <geom type="ellipsoid" size="0.03 0.006 0.004" pos="0.03 0 0" density="1200" contype="0" conaffinity="0"/>
                  <geom type="box" size="0.03 0.006 0.004" pos="0.03 0 0" mass="0" contype="2" conaffinity="2"/>
                </body>
              </body>
            </body>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <contact>
    <exclude body1="arm_l0" body2="arm_l3"/>
  </contact>
  <equality>
    <joint joint1="arm_l0" joint2="arm_l1"/>
    <joint joint1="arm_l1" joint2="arm_l2"/>
    <joint joint1="arm_l2" joint2="arm_l3"/>
    <joint joint1="finger_left_open" joint2="gripper_slide" polycoef="0 10 0 0 0"/>
    <joint joint1="finger_right_open" joint2="gripper_slide" polycoef="0 10 0 0 0"/>
  </equality>
  <actuator>
    <general name="extend" joint="arm_l3" biastype="affine" gainprm="100" biasprm="0 -100 -10" forcerange="-56 56"/>
    <general name="grip" joint="gripper_slide" biastype="affine" gainprm="200" biasprm="0 -200 -20"/>
  </actuator>
</mujoco>
"""

TEXTURED_URDF = """<?xml version="1.0"?>
<robot name="textured">
  <material name="blue"><color rgba="0.1 0.2 0.9 1"/></material>
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><box size="0.1 0.1 0.02"/></geometry><material name="blue"/></visual>
    <collision><geometry><box size="0.1 0.1 0.02"/></geometry></collision>
  </link>
  <link name="lever">
    <inertial><mass value="0.2"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="meshes/textured.obj"/></geometry></visual>
    <collision><geometry><mesh filename="meshes/textured.obj"/></geometry></collision>
  </link>
  <link name="twin">
    <inertial><mass value="0.2"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="meshes/textured.obj"/></geometry></visual>
  </link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="lever"/><origin xyz="0 0 0.05"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="3" velocity="2"/></joint>
  <joint name="twin_hinge" type="revolute"><parent link="base"/><child link="twin"/><origin xyz="0 0.1 0.05"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="3" velocity="2"/>
    <mimic joint="hinge" multiplier="-0.5" offset="0.1"/></joint>
</robot>
"""


def softfoot_like() -> str:
    """An MJCF shaped like Menagerie's iit_softfoot (its meshes left out): five toes of nine
    phalanges, each phalanx a body with two hinges (a virtual rolling joint at -13 mm and
    the phalanx joint) and a joint equality between its two joints: 45 same-body relations;
    five connects closing the toes onto the frontal arch; collision boxes that collide with
    nothing but the floor (contype 1, conaffinity 2)."""
    chain_bodies = [
        "phalanx_1",
        "phalanx_2",
        "phalanx_3",
        "phalanx_4",
        "phalanx_5",
        "reverse_phalanx",
        "rollover_phalanx",
        "phalanx_6",
        "distal_phalanx",
    ]
    out = [
        '<mujoco model="softfoot">',
        '<compiler autolimits="true" angle="radian"/>',
        "<default>",
        '<default class="standard_chain"><joint limited="true" stiffness="0.8" range="-0.157 0.785" '
        'armature="0.001" damping="0.04"/><geom contype="0" conaffinity="0" group="1" density="0"/></default>',
        '<default class="collision"><geom contype="1" conaffinity="2" group="3"/></default>',
        '<default class="virtual_pulley"><geom type="cylinder" contype="0" conaffinity="0" group="4" '
        'size="0.0035 0.006" density="0"/></default>',
        "</default>",
        "<worldbody>",
        '<body name="attachment_cube" quat="-0.7071068 0.7071068 0 0">'
        '<inertial pos="0 0 0.0014" mass="0.454" diaginertia="1.8e-4 1.78e-4 1.69e-4"/>',
        '<geom class="collision" group="0" type="box" size="0.03 0.03 0.03"/>',
        '<body name="posterior_arch"><inertial pos="-0.03 0.042 0" mass="0.0676" '
        'fullinertia="9.8e-05 8.6e-05 4.8e-05 2.03e-05 -2.77e-07 3.47e-07"/>',
        '<body name="heel" pos="-0.053 0.0727 0" quat="0.8219 0 0 0.5696">'
        '<inertial pos="0.006 0.015 0" mass="0.0796" diaginertia="8.5e-05 7.8e-05 1.4e-05"/>',
        '<joint name="posterior_arch_to_heel" axis="0 0 1" stiffness="0.001" range="-1.5708 1.5708" '
        'armature="0.001" damping="0.001"/>',
        '<geom name="heel_collision" class="collision" type="box" size="0.026 0.0126 0.058" '
        'pos="0.005 0.015 0" euler="0 0 -1.213"/>',
    ]
    equalities = []
    for toe in range(1, 6):
        z = [0.037, 0.0185, 0.0, -0.018, -0.037][toe - 1]
        parent, depth = "heel", 0
        for k, b in enumerate(chain_bodies):
            name = f"{b}_{toe}"
            if k == 0:
                pos, quat = f"0.01738 -0.01217 {z}", "0.8219 0 0 -0.5696"
            else:
                pos = {"rollover_phalanx": "0.0233 0 0", "phalanx_6": "0.032 0 0"}.get(b, "0.022 0 0")
                quat = "1 0 0 0"
            first, second = f"{parent}_to_virtual_{k + 1}_{toe}", f"virtual_{k + 1}_{toe}_to_{name}"
            limits = ' range="-0.785 0.157"' if b == "rollover_phalanx" else ""
            out += [
                f'<body name="{name}" pos="{pos}" quat="{quat}">',
                f'<joint name="{first}" class="standard_chain" pos="-0.013 0 0" axis="0 0 1"{limits}/>',
                '<inertial pos="0.0042 0.00046 0" quat="0.5 0.5 -0.5 0.5" mass="0.00524" '
                'diaginertia="2.79e-07 2.2e-07 1.9e-07"/>',
                f'<joint name="{second}" class="standard_chain" axis="0 0 1"{limits}/>',
                f'<geom name="{name}_collision" class="collision" type="box" size="0.01 0.0105 0.0055" '
                'pos="0.005 0 0"/>',
                f'<geom name="roll_{name}" class="virtual_pulley"/>',
                f'<site name="site_{name}" size="0.001"/>',
            ]
            equalities.append(
                f'<joint name="{name}_eq" solimp="0.85 0.95 0.01 0.5 2" joint1="{first}" joint2="{second}"/>'
            )
            parent, depth = name, depth + 1
        out += ["</body>"] * depth
    out += [
        "</body>",
        "</body>",  # heel, posterior arch
        '<body name="frontal_arch" quat="0.9560 0 0 0.2935"><inertial pos="0.0718 -0.0035 0" '
        'quat="0.5187 0.5187 0.4805 0.4805" mass="0.072" diaginertia="2.05e-4 1.06e-4 1.05e-4"/>',
        '<joint name="cube_to_frontal_arch" axis="0 0 1" stiffness="0" armature="0.001" damping="0.001"/>',
        '<geom name="frontal_arch_collision" class="collision" group="0" type="box" size="0.07 0.01 0.04" '
        'pos="0.07 0 0"/></body>',
        "</body></worldbody>",
        "<equality>",
        *equalities,
    ]
    out += [
        f'<connect name="frontal_arch_connect_rollover_phalanx_{toe}" body1="frontal_arch" '
        f'body2="rollover_phalanx_{toe}" anchor="0.129632 0 {z}"/>'
        for toe, z in zip(range(1, 6), (0.037, 0.0185, 0.0, -0.0185, -0.037))
    ]
    out += ["</equality>", "</mujoco>"]
    return "\n".join(out) + "\n"


#: the textured OBJ's texture colour (a solid image), RGB in 0..1
TEXTURE_RGB = (0.8, 0.4, 0.0)


def _ell(trimesh):
    """An L of two overlapping boxes, with a doubled face region: MuJoCo's legacy, exact and
    convex inertia all differ on it."""
    a = trimesh.creation.box((0.1, 0.03, 0.02))
    b = trimesh.creation.box((0.03, 0.08, 0.02))
    b.apply_translation((0.03, 0.03, 0.0))  # no vertex shared with a (MuJoCo's exact mode checks)
    return trimesh.util.concatenate([a, b])


def write_cases(folder: Path) -> dict[str, Path] | None:
    """Write the cases (and their meshes) into ``folder``; None without trimesh."""
    try:
        import trimesh
        from PIL import Image
    except ImportError:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    meshes = folder / "meshes"
    meshes.mkdir(exist_ok=True)
    trimesh.creation.box((0.4, 0.3, 0.2)).export(meshes / "block.stl")
    _ell(trimesh).export(meshes / "ell.stl")
    plate = trimesh.creation.box((0.06, 0.04, 0.004))
    plate.export(meshes / "plate.obj")
    lever = trimesh.creation.box((0.02, 0.02, 0.08))
    uv = np.column_stack([(lever.vertices[:, 0] > 0) * 0.5 + 0.25, (lever.vertices[:, 2] > 0) * 0.5 + 0.25])
    image = Image.new("RGB", (8, 8), tuple(int(round(c * 255)) for c in TEXTURE_RGB))
    lever.visual = trimesh.visual.TextureVisuals(uv=uv, image=image)
    lever.export(meshes / "textured.obj")
    out = {}
    for name, text in (
        ("rolling_finger.xml", ROLLING_FINGER),
        ("telescope.xml", TELESCOPE),
        ("textured.urdf", TEXTURED_URDF),
        ("softfoot_like.xml", softfoot_like()),
    ):
        (folder / name).write_text(text)
        out[name] = folder / name
    return out
