"""``python -m bondsim.cli``: the ``bondsim`` command."""

import sys

from bondsim.cli import main

if __name__ == "__main__":  # (importing it, as a walk over the package does, runs nothing)
    sys.exit(main())
