"""bondsim: a fast, deterministic simulator of NIC bonding / link aggregation.

>>> import bondsim
>>> result = bondsim.run("scenarios/thesis.toml", ["bond.mode=lb"])   # doctest: +SKIP
>>> result.summary["ooo_fraction"]                                      # doctest: +SKIP
>>> table = bondsim.sweep("scenarios/thesis_load.sweep.toml")           # doctest: +SKIP
"""

from bondsim._core import BondsimError, ScenarioError, __version__
from bondsim.api import RunResult, run, run_checked
from bondsim.scenario import load
from bondsim.store import Store
from bondsim.sweeps import sweep

__all__ = ["BondsimError", "RunResult", "ScenarioError", "Store", "__version__", "load", "run", "run_checked", "sweep"]
