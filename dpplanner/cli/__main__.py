"""``python -m dpplanner.cli``: the same as ``dpplanner-cli``."""

import sys

from dpplanner.cli import main

sys.exit(main())
