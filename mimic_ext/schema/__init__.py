"""USD side of mimic joints: schema registration, the canonical relation, authoring, checks.

Importing this package makes PhysxMimicJointAPI / NewtonMimicAPI known to USD through their
owners' plugins (physx-usd-schemas, newton-usd-schemas), loading one only for a schema no
plugin declares yet (Kit's compiled PhysxSchema is used as it is); see registration.py.
"""

try:
    import pxr  # noqa: F401
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError("mimic_ext needs OpenUSD's Python modules (pxr): pip install 'mimic-ext[usd]' "
                      "(usd-core), or use an environment that has usd-exchange (NVIDIA's converters)") from None

from .registration import register_schemas, schema_resolvable  # noqa: E402

register_schemas()

from .authoring import (  # noqa: E402  (registration must come first)
    edit_relation,
    find_relation,
    read_joint_relations,
    read_relations,
    remove_relation,
    set_relation,
)
from .relation import NEWTON, PHYSX, MimicRelation  # noqa: E402
from .schema_choice import (  # noqa: E402
    Conversion,
    carried_schemas,
    convert_relation,
    convert_stage,
    remove_duplicate,
    schema_for_edit,
)
from .stage_io import OpenedStage, open_stage, save_stage_atomically  # noqa: E402
from .validation import CODES, Finding, validate  # noqa: E402

__all__ = [
    "MimicRelation", "PHYSX", "NEWTON",
    "read_relations", "read_joint_relations", "set_relation", "edit_relation", "find_relation",
    "remove_relation", "register_schemas", "schema_resolvable",
    "OpenedStage", "open_stage", "save_stage_atomically",
    "CODES", "Finding", "validate",
    "Conversion", "carried_schemas", "convert_relation", "convert_stage", "remove_duplicate", "schema_for_edit",
]
