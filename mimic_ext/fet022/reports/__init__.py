"""The views of a sweep: console table, JSON (with its schema), JUnit XML, HTML page, and the
public harness's ``result.json`` per stage.

Every reporter takes a ``RunResult`` (one or more stages); ``as_run`` wraps a single
``SweepResult`` so that in-stage callers can use them too.
"""

from .common import as_run, overall_status
from .console import format_console
from .html import format_html, write_html
from .json_report import SCHEMA_PATH, format_json, load_schema, to_json_data, write_json
from .junit import format_junit, write_junit
from .result_json import harness_result, result_paths, write_result_json, write_result_jsons

__all__ = [
    "SCHEMA_PATH",
    "as_run",
    "format_console",
    "format_html",
    "format_json",
    "format_junit",
    "harness_result",
    "load_schema",
    "overall_status",
    "result_paths",
    "to_json_data",
    "write_html",
    "write_json",
    "write_junit",
    "write_result_json",
    "write_result_jsons",
]
