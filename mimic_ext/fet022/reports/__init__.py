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
    "as_run", "overall_status", "format_console", "format_json", "to_json_data", "write_json", "load_schema", "SCHEMA_PATH",
    "format_junit", "write_junit", "format_html", "write_html", "harness_result", "result_paths",
    "write_result_json", "write_result_jsons",
]
