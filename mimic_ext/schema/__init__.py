"""USD side of mimic joints: schema registration, the canonical relation, authoring, checks.

Importing this package makes PhysxMimicJointAPI / NewtonMimicAPI known to USD through their
owners' plugins (physx-usd-schemas, newton-usd-schemas), loading one only for a schema no
plugin declares yet (Kit's compiled PhysxSchema is used as it is); see registration.py.
"""

try:
    import pxr  # noqa: F401
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError(
        "mimic_ext needs OpenUSD's Python modules (pxr): pip install 'mimic-ext[usd]' "
        "(usd-exchange, as NVIDIA's converters), or use an environment that has usd-core"
    ) from None

from .registration import register_schemas, schema_resolvable

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
    "CODES",
    "NEWTON",
    "PHYSX",
    "Conversion",
    "Finding",
    "MimicRelation",
    "OpenedStage",
    "carried_schemas",
    "convert_relation",
    "convert_stage",
    "edit_relation",
    "find_relation",
    "open_stage",
    "read_joint_relations",
    "read_relations",
    "register_schemas",
    "remove_duplicate",
    "remove_relation",
    "save_stage_atomically",
    "schema_for_edit",
    "schema_resolvable",
    "set_relation",
    "validate",
]
