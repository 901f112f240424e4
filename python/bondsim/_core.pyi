"""Type stubs of the compiled core (crates/bondsim-py)."""

from collections.abc import Callable

__version__: str
#: Each kernel era (``sender.kernel``) and its preset: (field, value as JSON) pairs.
KERNELS: list[tuple[str, list[tuple[str, str]]]]
#: Every congestion control the schema takes (``sender.tcp_congestion_control``), the default first.
CONGESTION_CONTROLS: list[str]
#: Every plausibility bound on a physical field (the schema's ``BOUNDS``): (fields, low, high, unit, why).
BOUNDS: list[tuple[str, float, float, str, str]]
#: Every table a result may have, in its order: ``requests``, ``links``, then those only some runs have.
TABLES: list[str]

class BondsimError(Exception):
    """Base class of every bondsim error."""

class ScenarioError(BondsimError):
    """A scenario is malformed or impossible."""

    path: str

def check(scenario_json: str) -> tuple[str, list[str]]:
    """Checks a scenario (JSON); returns it with every default filled in, and its warnings (``path: message``:
    what it sets that its run ignores)."""

def run(
    scenario_json: str,
    progress: Callable[[int, int, float], None] | None = None,
    pcap_json: str | None = None,
    max_resident_bytes: int | None = None,
) -> tuple[str, dict[str, Table]]:
    """Runs a scenario (JSON); returns its summary as JSON and its tables by name (Arrow, of the schemas of
    :func:`schemas`). ``pcap_json``: packet capture options (JSON). ``max_resident_bytes``: the run stops with a
    BondsimError once this process holds more."""

class Table:
    """One table of a run as the core built it: Arrow through the PyCapsule interface (``pyarrow.table(t)``,
    ``pyarrow.RecordBatchReader.from_stream(t)``: no copy), or Python lists."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...
    def __len__(self) -> int: ...
    def to_pydict(self, columns: list[str] | None = None) -> dict[str, list]:
        """The columns (all, or those named) as Python values (None for a null), without pyarrow."""

def schemas() -> dict[str, Table]:
    """Every table's schema as the core defines it, as a table of no rows: ``summary`` (its scalar figures), then
    :data:`TABLES`."""

def closest(given: str, names: list[str]) -> str | None:
    """The one of ``names`` that ``given`` most likely misspells (for "did you mean"), or None."""

def cost(scenario_json: str) -> str:
    """A scenario's run, estimated: requests, packets, events, memory_bytes, seconds (JSON)."""

def schedulers() -> str:
    """Every registered scheduler (``bond.mode``) as JSON."""

def mptcp_schedulers() -> str:
    """Every MPTCP packet scheduler (``sender.mptcp_scheduler``) as JSON, with ``upstream``."""

def emulate(
    scenario_json: str,
    seconds: float | None = None,
    progress: Callable[[int, int, float], None] | None = None,
    traffic: str | None = None,
) -> str:
    """Runs a scenario (JSON) on the emulator (Linux, root); returns the result as JSON. ``traffic``:
    ``sockets`` (default) or ``iperf3``."""

def emulate_check(scenario_json: str) -> None:
    """Raises ScenarioError naming the field if the emulator cannot carry out the scenario."""
