"""``python -m mimic_ext``: the ``mimic-ext`` command."""

import sys

from .cli import main

sys.exit(main())
