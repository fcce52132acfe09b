"""Simulators that run a sweep plan, one module each behind the interface in ``base``."""

from .base import (
    EngineNotApplicable,
    ReadRelation,
    SweepEngine,
    Trace,
    check_engine,
    check_engine_name,
    engine_names,
    get_engine,
    hide_relations,
    register_engine,
    stage_without,
    unregister_engine,
)

__all__ = [
    "EngineNotApplicable",
    "ReadRelation",
    "SweepEngine",
    "Trace",
    "check_engine",
    "check_engine_name",
    "engine_names",
    "get_engine",
    "hide_relations",
    "register_engine",
    "stage_without",
    "unregister_engine",
]
