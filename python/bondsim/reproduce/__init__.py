"""Reproductions of the seed papers' experiments (``bondsim reproduce NAME``)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from types import ModuleType

#: Name on the command line -> module (in this package) with ``reproduce(out, progress=...)``.
MODULES = {
    "thesis": "thesis",
    "thesis-xor": "thesis_xor",
    "hetero-bonding": "hetero_bonding",
    "lacp-hashing": "lacp_hashing",
    "league": "league",
    "earliest-finish": "eft",
    "rr-links": "rr_links",
    "ftp-two-links": "ftp_two_links",
    "rr-unaware-switch": "rr_unaware_switch",
    "thesis-modes": "thesis_modes",
    "rr-udp": "rr_udp",
    "elt-tokens": "elt_tokens",
    "failover-switchover": "failover_switchover",
    "elt-aft": "elt_aft",
    "failure-league": "failure_league",
    "bond-vs-mptcp": "bond_vs_mptcp",
}

#: The reproductions of bondsim's own studies, no paper's: every other one judges the paper's results
#: (``verdicts.csv``, :mod:`bondsim.reproduce.verdicts`).
OWN = ("league", "earliest-finish", "failure-league", "bond-vs-mptcp")


class Papers(Mapping[str, ModuleType]):
    """Name -> reproduction module, each imported when first asked for (they load pandas and matplotlib)."""

    def __getitem__(self, name: str) -> ModuleType:
        return importlib.import_module(f"{__name__}.{MODULES[name]}")

    def __iter__(self) -> Iterator[str]:
        return iter(MODULES)

    def __len__(self) -> int:
        return len(MODULES)


#: Name on the command line -> module with ``reproduce(out, progress=...)``.
PAPERS = Papers()
