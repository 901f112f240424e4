"""Reproductions of the seed papers' experiments (``bondsim reproduce NAME``)."""

from bondsim.reproduce import thesis

#: Paper name on the command line -> module with ``reproduce(out, progress=...)``.
PAPERS = {"thesis": thesis}
