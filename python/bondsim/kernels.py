"""TCP as a kernel era ran it. The eras and their presets live in the schema, in Rust
(``sender.kernel``; ``crates/bondsim-core/src/scenario/sender.rs``, ``Kernel::preset``): a scenario
names one and its preset sets the era's sender fields the scenario leaves unset. This module lists
them for the CLI (``bondsim run --kernel`` / ``bondsim scenario check --kernel``, which put the
preset in place of what the scenario file set of those fields, before the user's own ``--set``,
which wins) and for the reproductions, which run the seeds' kernels from here."""

from __future__ import annotations

from bondsim import _core

#: The CLI's names for the eras: ``sender.kernel``'s, and ``modern``, the CLI's word for ``current``
#: (today's defaults, RACK-TLP).
ALIASES: dict[str, str] = {"modern": "current"}

#: Each era's preset as ``--set`` items (``modern``: none), by the CLI's names, today's last.
TCP: dict[str, list[str]] = {
    next((alias for alias, name in ALIASES.items() if name == era), era): [
        f"sender.{field}={value}"
        for field, value in preset  # a JSON value is one in TOML too
    ]
    for era, preset in sorted(_core.KERNELS, key=lambda kernel: kernel[0] == "current")
}


#: The eras the reproductions run, in their rows' order: the seeds' (Linux 3.x) first, today's last.
REPRODUCED: dict[str, list[str]] = {name: TCP[name] for name in ("linux-3.x", "modern")}


def era(name: str) -> str:
    """``sender.kernel``'s word for the CLI's ``name``."""
    return ALIASES.get(name, name)


def fields() -> list[str]:
    """The sender fields any preset sets (their names under ``sender``)."""
    return sorted({field for _, preset in _core.KERNELS for field, _ in preset})
