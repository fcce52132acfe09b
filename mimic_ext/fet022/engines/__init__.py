"""Simulators that run a sweep plan, one module each behind the interface in ``base``."""

from .base import (ReadRelation, SweepEngine, Trace, check_engine, check_engine_name, engine_names, get_engine,
                   register_engine, stage_without)

__all__ = ["ReadRelation", "SweepEngine", "Trace", "check_engine", "check_engine_name", "engine_names", "get_engine",
           "register_engine", "stage_without"]
