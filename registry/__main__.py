"""``python -m stitchlab.registry ACTION ...``: the registry commands on their own."""

import sys

from .cli import main

sys.exit(main())
