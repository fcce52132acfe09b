"""Prim paths of data/robotiq_style_linkage.usda that the Kit tests select and edit."""

FOLLOWER = "/Robotiq/Joints/right_outer_knuckle_joint"  # gearing -1: follows finger_joint 1:1
LEADER = "/Robotiq/Joints/finger_joint"
OTHER = "/Robotiq/Joints/left_inner_finger_joint"
FIXED = "/Robotiq/Joints/base_joint"
BODY = "/Robotiq/base_link"
