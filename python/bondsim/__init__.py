"""bondsim: a fast, deterministic simulator of NIC bonding / link aggregation.

>>> import bondsim
>>> result = bondsim.run("thesis", ["bond.mode=lb"])                  # doctest: +SKIP
>>> result.summary["ooo_fraction"]                                      # doctest: +SKIP
>>> table = bondsim.sweep("thesis_load")                                # doctest: +SKIP

``import bondsim`` loads only the compiled core: the rest (and pandas, DuckDB, matplotlib with it)
loads when first used, so that a command pays only for what it needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from bondsim._core import BondsimError, ScenarioError, __version__

if TYPE_CHECKING:
    from bondsim.api import RunResult, run, run_checked
    from bondsim.scenario import BondsimTypeError, load
    from bondsim.store import Store
    from bondsim.sweeps import sweep

#: Name -> the module that defines it, imported on first use.
_LAZY = {
    "BondsimTypeError": "bondsim.scenario",
    "RunResult": "bondsim.api",
    "run": "bondsim.api",
    "run_checked": "bondsim.api",
    "load": "bondsim.scenario",
    "Store": "bondsim.store",
    "sweep": "bondsim.sweeps",
}

__all__ = [
    "BondsimError",
    "BondsimTypeError",
    "RunResult",
    "ScenarioError",
    "Store",
    "__version__",
    "load",
    "run",
    "run_checked",
    "sweep",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'bondsim' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
