"""The views of a sweep: console table, JSON (with its schema), JUnit XML, HTML page, and the
public harness's ``result.json`` per stage.

Every reporter takes a ``RunResult`` (one or more stages); ``as_run`` wraps a single
``SweepResult`` so that in-stage callers can use them too.
"""

from ...lazy_exports import lazy_dir, lazy_getattr

#: each public name and the module holding it, imported on first use: a sweep that writes only to
#: the console loads neither the HTML (with its SVG plots) nor the JUnit or JSON writers
_EXPORTS = {
    "as_run": "common",
    "overall_status": "common",
    "format_console": "console",
    "format_html": "html",
    "write_html": "html",
    "SCHEMA_PATH": "json_report",
    "format_json": "json_report",
    "load_schema": "json_report",
    "to_json_data": "json_report",
    "write_json": "json_report",
    "format_junit": "junit",
    "write_junit": "junit",
    "harness_result": "result_json",
    "result_paths": "result_json",
    "write_result_json": "result_json",
    "write_result_jsons": "result_json",
}

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 (the lazy table is the one list of public names)
__getattr__ = lazy_getattr(__name__, _EXPORTS)
__dir__ = lazy_dir(__name__, _EXPORTS)
