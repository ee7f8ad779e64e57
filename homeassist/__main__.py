"""`python -m homeassist` is the same as the `homeassist` console script."""

import sys

from homeassist.cli import main

sys.exit(main())
