"""``python -m dialcheck ...``: the same as the ``dialcheck`` command (for environments without its script)."""

import sys

from .cli import main

sys.exit(main())
