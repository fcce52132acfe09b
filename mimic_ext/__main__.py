"""``python -m mimic_ext``: the ``mimic-ext`` command."""

from .cli import run

run()
