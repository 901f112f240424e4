"""Reproductions of the seed papers' experiments (``bondsim reproduce NAME``)."""

from bondsim.reproduce import eft, hetero_bonding, lacp_hashing, league, thesis, thesis_xor

#: Name on the command line -> module with ``reproduce(out, progress=...)``.
PAPERS = {
    "thesis": thesis,
    "thesis-xor": thesis_xor,
    "hetero-bonding": hetero_bonding,
    "lacp-hashing": lacp_hashing,
    "league": league,
    "earliest-finish": eft,
}
