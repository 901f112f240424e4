"""Scenario files: load TOML, apply ``--set`` overrides, resolve file references.

The schema itself lives in the Rust core (``scenario/``); this module only
prepares the document: it reads the TOML, applies ``path=value`` overrides
(dotted paths, list items by index: ``links.1.period_ms=40``), and turns
file references into inline data so the core never reads files:

* ``links.N.trace_file = "x.txt"`` becomes ``trace_intervals_s`` (one number
  per line: seconds since the previous send; ``#`` starts a comment);
* ``workload.file_size = {kind = "dir", path = "files/"}`` becomes
  ``{kind = "list", bytes = [...]}`` with the sizes of every file below it.
"""

from __future__ import annotations

import codecs
import contextlib
import contextvars
import copy
import datetime
import importlib.resources
import json
import math
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from bondsim import _core, kernels
from bondsim._core import BondsimError, ScenarioError


class BondsimTypeError(BondsimError, TypeError):
    """An argument of the Python API of a type it does not take (``Store(123)``, ``sweep(123)``, a
    ``progress`` that is not callable): a :class:`~bondsim.BondsimError` (what the command line shows as
    one line) and a :class:`TypeError` (what Python code catches), its text naming the argument, what
    it takes and what it got, raised before anything runs."""


def type_error(argument: str, allowed: str, got: Any) -> BondsimTypeError:
    """A :class:`BondsimTypeError`: ``"argument: allowed, got X (type)"``."""
    text = repr(got)
    text = text if len(text) <= 60 else text[:57] + "..."
    return BondsimTypeError(f"{argument}: {allowed}, got {text} ({type(got).__name__})")


def scenario_error(path: str, message: str) -> ScenarioError:
    """A :class:`~bondsim.ScenarioError` about the field at dotted ``path`` (``""``: the document as a
    whole): its text is ``"path: message"`` and its ``path`` attribute names the field, as the core's
    own schema errors do. Scenario and sweep-file readers raise it, so every error names where it is."""
    err = ScenarioError(f"{path}: {message}" if path else message)
    err.path = path
    return err


def parse_value(text: str, item: str | None = None) -> Any:
    """A ``--set`` value: TOML syntax (``3``, ``2.5``, ``true``, ``[1, 2]``, ``{a = 1}``), else a plain string.
    It is exactly one value: a :class:`~bondsim.ScenarioError` naming ``--set`` and ``item`` (the whole
    ``PATH=VALUE``, default ``text``) if more follows it on further lines (``"x"`` then ``seed = 1``, which
    TOML would read as a second key, silently dropped) or it is a plain string over several lines."""
    import tomllib  # (on use: a command that reads no TOML, `bondsim report` of stored runs, skips its start)

    item = text if item is None else item
    try:
        doc = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        if "\n" in text or "\r" in text:
            raise _not_one_assignment(item, "a plain-text value is one line (quote it as a TOML string)") from None
        return text
    if set(doc) != {"v"}:
        raise _not_one_assignment(item, f"the value is followed by more ({', '.join(k for k in doc if k != 'v')})")
    return doc["v"]


def _not_one_assignment(item: str, why: str) -> ScenarioError:
    """The error for a ``--set`` that is not exactly one ``PATH=VALUE``: the text shown on one line."""
    return scenario_error("--set", f"takes exactly one PATH=VALUE (one --set per field), {why}; got {item!r}")


def path_keys(path: str) -> list[str]:
    """The keys of a field's ``path``: dotted (``links.1.period_ms``), list items also as the errors
    name them (``links[1].period_ms``)."""
    return re.sub(r"\[(\d+)\]", r".\1", path).split(".")


#: :func:`value_at`'s answer for a path the document does not have.
MISSING = object()


def value_at(doc: Any, path: str) -> Any:
    """The value at dotted ``path`` in ``doc`` (list items by index), or :data:`MISSING`."""
    for key in path_keys(path):
        if isinstance(doc, list) and key.isdigit() and int(key) < len(doc):
            doc = doc[int(key)]
        elif isinstance(doc, dict) and key in doc:
            doc = doc[key]
        else:
            return MISSING
    return doc


def _count(entry: Any) -> int:
    """How many links a ``[[links]]`` entry makes (``count``, default 1; one if it is not a whole number,
    which the schema then refuses)."""
    count = entry.get("count", 1) if isinstance(entry, Mapping) else 1
    return count if isinstance(count, int) and not isinstance(count, bool) and 1 <= count <= 4096 else 1


def link_names(entries: list) -> list[tuple[int, str]]:
    """Every link the ``[[links]]`` ``entries`` make, in link-id order: (its entry's index, its name). The
    names are the core's (``LinkSpec::link_name``): an entry's ``name`` if it makes one link, the name and
    the link's id if it makes several (``count``), else ``link`` and the id."""
    names = []
    for i, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, Mapping) else None
        count = _count(entry)
        for _ in range(count):
            link = len(names)
            names.append((i, name if isinstance(name, str) and count == 1 else f"{name or 'link'}{link}"))
    return names


def _split_out(entries: list, name: str, where: str) -> int:
    """The index in ``entries`` of the entry that makes only the link called ``name``: an entry that makes it
    among others (``count``) is split in place into the links before it, it, and those after, each piece
    keeping its links' ids and names (so their random streams and results too). A name no link has is an
    error at ``where`` saying how links are addressed."""
    names = link_names(entries)
    found = [(k, i) for k, (i, n) in enumerate(names) if n == name]
    if not found:
        listed = ", ".join(n for _, n in names[:12]) + (", ..." if len(names) > 12 else "")
        close = _core.closest(name, [n for _, n in names])
        hint = f"; did you mean links.{close}?" if close else ""
        raise scenario_error(
            where,
            f"no link is called `{name}` (links: {listed}); links.NAME is one link by its name, links.N "
            f"the N-th [[links]] entry (0 to {len(entries) - 1}){hint}",
        )
    link, i = found[0]
    entry = entries[i]
    first = next(k for k, (j, _) in enumerate(names) if j == i)
    count = _count(entry)
    if count == 1:
        return i
    pieces = []
    for start, size in ((first, link - first), (link, 1), (link + 1, first + count - link - 1)):
        if size:
            piece = copy.deepcopy(entry)
            piece["count"] = size
            if size == 1 and isinstance(entry.get("name"), str):
                piece["name"] = names[start][1]  # one link alone would lose the id its name carries
            pieces.append(piece)
    entries[i : i + 1] = pieces
    return i + (1 if link > first else 0)


def set_path(doc: dict, path: str, value: Any) -> None:
    """Sets ``value`` at dotted ``path`` in ``doc``, creating tables on the way. Under ``links``, a key
    that is not an index names one link (``links.link2.failures``): its entry is split out if it makes
    several (:func:`_split_out`)."""
    keys = path_keys(path)
    if not path or any(k == "" for k in keys):
        raise scenario_error(path, "a --set path is dotted keys, e.g. links.1.period_ms (or links[1].period_ms)")
    node: Any = doc
    for depth, key in enumerate(keys):
        here = ".".join(keys[: depth + 1])
        last = depth == len(keys) - 1
        links = depth == 1 and keys[0] == "links" and isinstance(node, list)
        if links and not key.isdigit():
            key = str(_split_out(node, key, here))
        if isinstance(node, list):
            if not key.isdigit() or int(key) >= len(node):
                rule = ""
                if links and key.isdigit() and int(key) < len(link_names(node)):
                    # an index beyond the entries but not beyond the links they make (count): say the rule
                    made = len(link_names(node))
                    rule = (
                        f": links.N is the N-th [[links]] entry, and these {len(node)} make {made} links (count); "
                        f"one link is links.NAME, did you mean links.{link_names(node)[int(key)][1]}?"
                    )
                raise scenario_error(here, f"list index must be 0 to {len(node) - 1}, got `{key}`{rule}")
            if last:
                node[int(key)] = value
            else:
                node = node[int(key)]
        elif isinstance(node, dict):
            if last:
                node[key] = value
            else:
                node = node.setdefault(key, {})
        else:
            raise scenario_error(".".join(keys[:depth]), f"is a value ({node!r}), it has no field `{key}`")


def plain(value: Any) -> Any:
    """``value`` with numpy's scalars and arrays (a notebook's usual numbers) as Python's own, and tuples
    as lists: what JSON, and so the core, takes."""
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return plain(value.tolist())
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def override_list(overrides: Any) -> list[str]:
    """``overrides`` checked to be ``path=value`` strings (a lone string would be read a character at a time)."""
    if isinstance(overrides, str | bytes) or not isinstance(overrides, Iterable):
        example = "e.g. ['bond.mode=lb']"
        raise scenario_error("", f"overrides are a list of 'path=value' strings, {example}; got {overrides!r}")
    items = list(overrides)
    bad = next((item for item in items if not isinstance(item, str)), None)
    if bad is not None:
        raise scenario_error("", f"an override is a 'path=value' string, e.g. 'bond.mode=lb'; got {bad!r}")
    return items


def apply_overrides(doc: dict, overrides: Iterable[str]) -> dict:
    """A copy of ``doc`` with every ``path=value`` override applied in order."""
    doc = copy.deepcopy(doc)
    for item in override_list(overrides):
        path, sep, text = item.partition("=")
        if not sep:
            raise scenario_error("", f"--set takes path=value, got `{item}`")
        if "\n" in path or "\r" in path:
            raise _not_one_assignment(item, "its path is one line of dotted keys")
        try:
            item.encode("utf-8")
        except UnicodeEncodeError:  # bytes the shell passed that are not UTF-8 (Python keeps them as surrogates)
            raise scenario_error(path.strip().encode("utf-8", "replace").decode(), "--set takes UTF-8 text") from None
        set_path(doc, path.strip(), parse_value(text.strip(), item))
    return doc


#: The largest scenario, sweep or trace file read, bytes: a file beyond it is refused before it is
#: read (``/dev/zero`` or a mistaken multi-gigabyte file would otherwise fill the memory).
MAX_FILE_BYTES = 256 * 2**20


def read_text(path: Path, where: str, what: str) -> str:
    """The text of ``path`` (UTF-8, a leading byte-order mark dropped); a :class:`~bondsim.ScenarioError`
    at ``where`` if it is not a regular file (a FIFO or a device would block or never end), is larger
    than :data:`MAX_FILE_BYTES`, cannot be read or is not UTF-8."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise scenario_error(where, f"{what} {path} is {kind}")
        if info.st_size > MAX_FILE_BYTES:
            raise scenario_error(
                where, f"{what} {path} is {info.st_size:,} bytes, more than the {MAX_FILE_BYTES:,} bondsim reads"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise scenario_error(where, f"cannot read {what} {path}: {exc.strerror}") from None
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise scenario_error(
            where,
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); save the {what} as UTF-8",
        ) from None


def _read_trace(path: Path, field: str) -> list[float]:
    lines = read_text(path, field, "trace file").splitlines()
    values = []
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            values.append(float(text))
        except ValueError:
            raise scenario_error(field, f"{path}:{number}: expected seconds as a number, got `{text}`") from None
    return values


def _dir_sizes(path: Path, field: str) -> list[int]:
    if not path.is_dir():
        raise scenario_error(field, f"{path} is not a directory")
    sizes = [p.stat().st_size for p in sorted(path.rglob("*")) if p.is_file()]
    if not sizes:
        raise scenario_error(field, f"{path} holds no files")
    return sizes


def _links(doc: Mapping) -> list:
    links = doc.get("links")
    return links if isinstance(links, list) else []


def _file_size(doc: Mapping) -> Any:
    workload = doc.get("workload")
    return workload.get("file_size") if isinstance(workload, dict) else None


def _trace_file(link: Any) -> bool:
    """Whether a link reads its intervals from a file (``trace_file``)."""
    return isinstance(link, dict) and "trace_file" in link


def _dir_size(size: Any) -> bool:
    """Whether a ``workload.file_size`` takes its sizes from a directory's files (``kind = "dir"``)."""
    return isinstance(size, dict) and size.get("kind") == "dir"


def _refers_to_files(doc: Mapping) -> bool:
    """Whether ``doc`` names a file :func:`resolve_files` reads."""
    return any(_trace_file(link) for link in _links(doc)) or _dir_size(_file_size(doc))


def resolve_files(doc: dict, base: Path) -> dict:
    """A copy of ``doc`` with file references read into inline data (paths relative to ``base``)."""
    doc = copy.deepcopy(doc)
    # anything of the wrong shape is left as it is, for the schema to name
    for i, link in enumerate(_links(doc)):
        if _trace_file(link):
            field = f"links.{i}.trace_file"
            link["trace_intervals_s"] = _read_trace(base / str(link.pop("trace_file")), field)
    size = _file_size(doc)
    if _dir_size(size):
        extra = set(size) - {"kind", "path"}
        if extra or "path" not in size:
            raise scenario_error("workload.file_size", 'kind = "dir" takes exactly one key, path')
        doc["workload"]["file_size"] = {
            "kind": "list",
            "bytes": _dir_sizes(base / str(size["path"]), "workload.file_size.path"),
        }
    return doc


#: What a shipped file of each kind is called: ``<name>.toml`` a scenario, ``<name>.sweep.toml`` a sweep.
SHIPPED_SUFFIX = {"scenario": ".toml", "sweep": ".sweep.toml"}
#: The command that runs a shipped file of each kind.
SHIPPED_COMMAND = {"scenario": "bondsim run", "sweep": "bondsim sweep"}


def shipped_dir() -> Path:
    """The folder of the scenario and sweep files bondsim ships (``bondsim/scenarios``: package data of
    the wheel, the same folder in the source tree), found through importlib.resources wherever bondsim is
    installed: the one place that knows where they are."""
    folder = importlib.resources.files("bondsim") / "scenarios"
    if not isinstance(folder, Path):
        # bondsim's core is a compiled extension, which Python imports only from files on disk, so its
        # package data are files too; a loader that says otherwise has bondsim half installed
        raise BondsimError(f"bondsim's shipped scenarios are not files on disk ({folder}): reinstall bondsim")
    return folder


def _shipped_kind(path: Path) -> str:
    return "sweep" if path.name.endswith(SHIPPED_SUFFIX["sweep"]) else "scenario"


def shipped_names(kind: str = "scenario") -> list[str]:
    """The names of the shipped scenarios (``<name>.toml``), or with ``kind="sweep"`` of the shipped
    sweeps (``<name>.sweep.toml``), sorted."""
    suffix = SHIPPED_SUFFIX[kind]
    files = shipped_dir().glob("*.toml")
    return sorted(p.name.removesuffix(suffix) for p in files if _shipped_kind(p) == kind)


def shipped(name: str, kind: str = "scenario", where: str = "") -> Path:
    """The shipped file of ``name`` (a plain name: ``thesis``, ``thesis_load`` with ``kind="sweep"``),
    whatever the working folder holds; a :class:`~bondsim.ScenarioError` at ``where`` listing the names
    if bondsim ships no such one. The reproductions read their scenarios through this."""
    if name not in shipped_names(kind):
        names = ", ".join(shipped_names(kind)) or "none"
        raise scenario_error(where, f"{name}: not a shipped {kind} ({names})")
    return shipped_dir() / f"{name}{SHIPPED_SUFFIX[kind]}"


def find(name: str | Path, where: str = "", kind: str = "scenario") -> Path:
    """The file a user names: ``name`` itself if it is there, else the shipped one of a plain name (no
    folder, no suffix: :func:`shipped`); else a :class:`~bondsim.ScenarioError` at ``where`` listing the
    shipped names. A folder is never a scenario: one named like a shipped scenario (``bondsim reproduce
    thesis --out thesis`` makes ``thesis/``) leaves the name to mean the shipped one."""
    path = Path(name)
    text = str(name)
    plain = bool(text) and path.name == text and text not in (".", "..") and not path.suffix
    if path.exists() and not (plain and path.is_dir() and text in shipped_names(kind)):
        return path
    if plain and text in shipped_names(kind):
        return shipped(text, kind, where)
    names = ", ".join(shipped_names(kind)) or "none"
    other = "sweep" if kind == "scenario" else "scenario"
    close = _core.closest(text, shipped_names(kind)) if plain else None
    hint = (
        f"; {text} is a shipped {other}, run by {SHIPPED_COMMAND[other]}"
        if plain and text in shipped_names(other)
        else f"; did you mean {close}?"
        if close
        else ""
    )
    raise scenario_error(where, f"{text}: not a file, and not a shipped {kind} ({names}){hint}")


def describe(path: Path) -> str:
    """A scenario or sweep file's one-line description: the first line of the comment it opens with
    (the shipped files start with a summary line, then a blank comment line, as a docstring does);
    ``""`` if it opens with no comment."""
    for line in read_text(path, "", "scenario").splitlines():
        if not line.startswith("#"):
            return ""
        if line.strip("# \t"):
            return line.lstrip("#").strip()
    return ""


def load_toml(path: str | Path) -> dict:
    """The raw document of a scenario file (no overrides, no checks)."""
    import tomllib

    path = Path(path)
    text = read_text(path, "", "scenario")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise scenario_error("", f"{path} is not valid TOML: {exc}") from None


def load(source: str | Path | Mapping, overrides: Iterable[str] = (), kernel: str | None = None) -> dict:
    """Loads a scenario (TOML path, shipped name like ``thesis``, or dict), applies
    overrides, checks it; returns it with every default filled in. ``kernel`` names a TCP preset
    of :data:`bondsim.kernels.TCP`: it takes the place of the file's values of its fields, and
    ``overrides`` still win (:func:`with_kernel`); the scenario's sender must then be TCP."""
    try:
        if isinstance(source, Mapping):
            doc, base = plain(source), Path.cwd()
        elif not isinstance(source, str | Path) or not str(source):
            raise scenario_error(
                "", f"a scenario is a TOML file, a shipped name like `thesis`, or a dict; got {source!r}"
            )
        else:
            path = find(source)
            doc = load_toml(path)
            base = path.parent
        overrides = override_list(overrides)
        if kernel is None:
            return check_resolved(apply_overrides(doc, overrides), base)
        doc = apply_overrides(with_kernel(doc, kernel, overrides, base), overrides)
        try:
            return check_resolved(doc, base)
        except ScenarioError as exc:
            path = str(getattr(exc, "path", ""))
            if path.removeprefix("sender.") not in kernels.fields():
                raise
            err = scenario_error("", f"{exc} (the kernel preset {kernel} sets {path})")
            err.path = path
            raise err from None
    except RecursionError:
        raise too_deep() from None


def written(source: str | Path, overrides: Iterable[str] = ()) -> dict:
    """A scenario (TOML path or shipped name) as written, with ``overrides`` applied and its file references read
    in, checked (a :class:`ScenarioError` naming the field otherwise) but not resolved: further changes on it
    behave as ``--set`` does (a field the schema derives, such as the MSS, follows them; a part's kind can
    change), where on :func:`load`'s resolved scenario they would meet the defaults it filled."""
    path = find(source)
    doc = resolve_files(apply_overrides(load_toml(path), override_list(overrides)), path.parent)
    check_resolved(doc, path.parent)
    return doc


def with_kernel(doc: dict, kernel: str, overrides: list[str], base: Path) -> dict:
    """``doc`` with TCP preset ``kernel`` (:data:`bondsim.kernels.TCP`, spelled ``sender.kernel``) in
    place of whatever the file set of the fields any preset sets (``modern`` leaves them at their
    defaults); ``overrides``, applied after, still win. Its sender (after ``overrides``) must be TCP."""
    if kernel not in kernels.TCP and kernel not in kernels.ALIASES.values():
        raise BondsimError(f"kernel preset {kernel!r} is unknown; choose one of {', '.join(kernels.TCP)}")
    doc = copy.deepcopy(doc)
    sender = doc.get("sender")
    if isinstance(sender, dict):
        for field in kernels.fields():
            sender.pop(field, None)
    # The sender's kind is learnt without the preset's fields, the user's included: those may hold
    # only beside the preset's others (`sender.tcp_fack=true` needs the preset's tcp_recovery = 0).
    others = [item for item in overrides if not sets_preset_field(item)]
    kind = check_resolved(apply_overrides(doc, others), base)["sender"]["kind"]
    if kind not in ("tcp", "mptcp"):
        raise scenario_error(
            "sender.kind",
            f"the kernel preset {kernel} sets the TCP sender's fields, and this scenario's sender is {kind!r}; "
            'set sender.kind = "tcp" (or "mptcp", whose subflows take them) with it',
        )
    # The preset itself is the schema's (`sender.kernel`), which fills the fields popped above.
    return apply_overrides(doc, [f'sender.kernel="{kernels.era(kernel)}"'])


def sets_preset_field(override: str) -> bool:
    """Whether ``override`` (``path=value``) sets a sender field a kernel preset sets."""
    path = override.partition("=")[0].strip()
    return path.startswith("sender.") and path.removeprefix("sender.") in kernels.fields()


#: How deep tables and arrays may nest in a scenario (its own fields are a handful of levels deep).
MAX_DEPTH = 32


def too_deep() -> ScenarioError:
    """The error for a document nested deeper than :data:`MAX_DEPTH` (Python's own limit would otherwise
    end in a traceback)."""
    return scenario_error("", f"tables and arrays nest more than {MAX_DEPTH} deep; no scenario field is that deep")


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, for an error message's one line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _bad_value(value: Any) -> tuple[str, str] | None:
    """The dotted path of the first value JSON (and so the core) cannot take, and why: NaN, an infinity,
    a TOML date or time, a value of another Python type (a set, an object) or a key that is not a string;
    a :class:`~bondsim.ScenarioError` if ``value`` nests too deep."""
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack:
        path, item, depth = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            text = "NaN" if math.isnan(item) else "infinity" if item > 0 else "-infinity"
            return path, f"must be a finite number, got {text}"
        if isinstance(item, datetime.date | datetime.time):
            return path, f"is a TOML date or time ({item.isoformat()}); no scenario field takes one"
        if not isinstance(item, Mapping | list | str | int | float | bool) and item is not None:
            return path, (
                "is not a scenario value: values are numbers, strings, booleans, lists and tables "
                f"(dicts with string keys), got {_short(item)} ({type(item).__name__})"
            )
        if isinstance(item, Mapping):
            key = next((key for key in item if not isinstance(key, str)), None)
            if key is not None:
                return path, (
                    f"{'a table' if path else 'the scenario'}'s keys are strings (field names), "
                    f"got the key {_short(key)} ({type(key).__name__})"
                )
        if not isinstance(item, Mapping | list):
            continue
        if depth >= MAX_DEPTH and len(item):
            raise too_deep()
        items = item.items() if isinstance(item, Mapping) else enumerate(item)
        # (a plain scalar or a finite float can be neither wrong nor hold anything: not stacked, nor its path
        # written; the order in which the rest are met is the same)
        children = [(f"{path}.{key}" if path else str(key), child, depth + 1) for key, child in items if _looked(child)]
        stack.extend(reversed(children))
    return None


#: The exact types of values that need no look (a subclass of one takes every check).
_PLAIN = frozenset({str, int, bool, type(None)})


def _looked(value: Any) -> bool:
    """Whether :func:`_bad_value` must look at ``value``: not a plain scalar, nor a finite float."""
    kind = type(value)
    return kind not in _PLAIN and not (kind is float and math.isfinite(value))


#: Where the warnings of the scenarios checked go (:func:`warnings_to`); none: nowhere.
_warning_sink: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar(
    "bondsim_warning_sink", default=None
)


@contextlib.contextmanager
def warnings_to(sink: Callable[[str], None]) -> Iterator[None]:
    """A block in which the warnings of every scenario checked (``path: message``: a field its run ignores,
    such as another bonding mode's option) are handed to ``sink``, each text once (a sweep's points share
    them). The command line prints them on stderr; the Python API says nothing unless asked::

        with bondsim.scenario.warnings_to(print):
            bondsim.run("thesis", ["bond.xmit_hash_policy=layer3+4"])
    """
    seen: set[str] = set()

    def once(text: str) -> None:
        if text not in seen:
            seen.add(text)
            sink(text)

    token = _warning_sink.set(once)
    try:
        yield
    finally:
        _warning_sink.reset(token)


def warn(text: str) -> None:
    """Hands ``text`` (``path: message``) to where :func:`warnings_to` says, if anywhere."""
    sink = _warning_sink.get()
    if sink is not None:
        sink(text)


def check(doc: Mapping) -> dict:
    """Checks a scenario dict against the core's schema; returns it with every default filled in. Its
    warnings go where :func:`warnings_to` says."""
    found = _bad_value(doc)
    if found:
        # JSON has no NaN, infinity or date: say so here rather than let the core stumble on the token
        raise scenario_error(*found)
    text, warnings = _core.check(json.dumps(doc, allow_nan=False))
    sink = _warning_sink.get()
    for warning in warnings if sink is not None else ():
        sink(warning)
    return json.loads(text)


def check_resolved(doc: Mapping, base: Path) -> dict:
    """:func:`check` of ``doc`` with its file references read (:func:`resolve_files`, relative to ``base``).
    An error in the intervals read from a trace file is named after the field the user wrote,
    ``links.N.trace_file`` (with the interval's number), not after the one it became."""
    # (nothing to read: checked without a deep copy first; checking reads the scenario and changes nothing)
    resolved = resolve_files(dict(doc), base) if _refers_to_files(doc) else dict(doc)
    try:
        return check(resolved)
    except ScenarioError as exc:
        path = str(getattr(exc, "path", ""))
        found = re.fullmatch(r"links\.(\d+)\.trace_intervals_s(?:\.(\d+))?", path)
        links = doc.get("links")
        i = int(found.group(1)) if found else -1
        if not (isinstance(links, list) and 0 <= i < len(links) and isinstance(links[i], Mapping)):
            raise
        if "trace_file" not in links[i]:
            raise
        k = found.group(2)
        where = f"interval {int(k) + 1}" if k is not None else "its intervals"
        message = str(exc).removeprefix(f"{path}: ")
        raise scenario_error(f"links.{i}.trace_file", f"{links[i]['trace_file']}, {where}: {message}") from None


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_value(key)


def _toml_value(value: Any) -> str:
    """``value`` in TOML's inline syntax (a checked scenario holds no null, NaN or infinity)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        # JSON's string escapes are TOML's basic string's; TOML also wants DEL escaped
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def to_toml(doc: Mapping, comment: str = "") -> str:
    """A (checked) scenario as a TOML file that loads back to it: top-level tables as ``[section]``, lists
    of tables as ``[[links]]``, a table within a section inline when it holds only values (``file_size =
    {kind = "fixed", bytes = 1000}``), else as ``[section.sub]``; ``comment`` opens the file."""
    lines = [f"# {line}".rstrip() for line in comment.splitlines()]

    def section(node: Mapping, path: list[str], top: bool) -> None:
        def own(value: Any) -> bool:  # a table of its own (a header), rather than a key = value line
            if isinstance(value, Mapping):
                return top or any(isinstance(v, Mapping | list) for v in value.values())
            return top and isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)

        for key, value in node.items():
            if not own(value):
                lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
        for key, value in node.items():
            if not own(value):
                continue
            dotted = ".".join(_toml_key(k) for k in [*path, key])
            for item in value if isinstance(value, list) else [value]:
                lines.extend(["", f"[[{dotted}]]" if isinstance(value, list) else f"[{dotted}]"])
                section(item, [*path, key], False)

    section(doc, [], True)
    return "\n".join(lines).lstrip("\n") + "\n"


def scenario_hash(doc: Mapping) -> str:
    """A stable hash of a (checked) scenario: equal scenarios, equal hashes."""
    import hashlib

    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
