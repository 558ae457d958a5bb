"""``python -m bloomkit``: the ``bloomkit`` command (``--version`` prints the hash path too)."""

import sys

from .cli import main

sys.exit(main())
