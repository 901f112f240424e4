"""bondsim: a fast, deterministic simulator of NIC bonding / link aggregation.

>>> import bondsim
>>> result = bondsim.run("scenarios/thesis.toml", ["bond.mode=lb"])   # doctest: +SKIP
>>> result.summary["ooo_fraction"]                                      # doctest: +SKIP
"""

from bondsim._core import BondsimError, ScenarioError, __version__
from bondsim.api import RunResult, run, run_checked
from bondsim.scenario import load

__all__ = ["BondsimError", "RunResult", "ScenarioError", "__version__", "load", "run", "run_checked"]
