"""``python -m bondsim.cli``: the ``bondsim`` command."""

import sys

from bondsim.cli import entry

if __name__ == "__main__":  # (importing it, as a walk over the package does, runs nothing)
    sys.exit(entry())
