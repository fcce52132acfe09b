"""The Kit layer: extension entry, undoable mimic commands, Property window section, in-stage FET022 runner.

The only part of ``mimic_ext`` that imports ``omni`` and ``carb``. Kit loads it as the
``[[python.module]] name = "mimic_ext.kit"`` of the extension and starts every ``omni.ext.IExt``
subclass it finds here (``MimicExtension``); plain Python never imports it.
"""

from .commands import (
    AddMimicJointCommand,
    ConvertMimicSchemaCommand,
    RemoveMimicDuplicateCommand,
    RemoveMimicJointCommand,
    SetMimicComplianceCommand,
    SetMimicGearingCommand,
    SetMimicOffsetCommand,
    SetMimicReferenceJointCommand,
)
from .extension import MimicExtension, get_extension
from .property_widget import MimicPropertiesWidget
from .stage_sweep import StageSweepRunner

__all__ = [
    "AddMimicJointCommand",
    "ConvertMimicSchemaCommand",
    "MimicExtension",
    "MimicPropertiesWidget",
    "RemoveMimicDuplicateCommand",
    "RemoveMimicJointCommand",
    "SetMimicComplianceCommand",
    "SetMimicGearingCommand",
    "SetMimicOffsetCommand",
    "SetMimicReferenceJointCommand",
    "StageSweepRunner",
    "get_extension",
]
