"""Read suite files without trusting them: regular files only, bounded in size, and YAML that
cannot expand or nest without bound or repeat a key.

A FIFO would block the loader forever and ``/dev/zero`` would fill memory; a billion-laughs
document is a few hundred bytes that expand to 10^9 nodes the moment anything walks it.
"""

from __future__ import annotations

import importlib
import os
import stat
from pathlib import Path
from typing import Any, cast

import yaml

from proctor.scenarios.errors import SuiteError

MAX_FILE_BYTES = 16 * 1024 * 1024  # suite files are hand-written: far below this
MAX_YAML_NODES = 1_000_000  # scalars, sequences and mappings, each alias counted as expanded
MAX_YAML_DEPTH = 100  # levels of nesting, through aliases too


_NOT_REGULAR = "not a regular file (a FIFO, device or directory); use a plain file"


class UnsafeFile(Exception):
    """A suite file that cannot be read, is not a regular file or is too large; says why."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.reason = reason


def read_regular_bytes(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes, refusing anything but a regular file (after symlinks) and files over ``limit``.

    It is opened non-blocking, so a FIFO swapped in after the check cannot hang the read either.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise UnsafeFile(path, _NOT_REGULAR)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise UnsafeFile(path, f"cannot read ({exc.strerror})") from exc
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeFile(path, _NOT_REGULAR)
        data = f.read(limit + 1)
    if len(data) > limit:
        raise UnsafeFile(
            path,
            f"larger than {limit // (1024 * 1024)} MiB, the most proctor reads from such a file; "
            "split it, or keep large data in the suite's repos or fixtures and point to it",
        )
    return data


class _Bounds(yaml.composer.Composer, yaml.constructor.SafeConstructor):
    """A safe composer and constructor that refuse repeated keys, deep nesting and large alias
    expansion, over whichever parser ``bounded_loader`` puts under them.

    Sizes are counted as the node graph is composed (children before parents), so the check
    costs one addition per node and never walks the expanded tree. Composing stays in Python
    (that is where the bounds are), under whichever parser tokenizes the text.
    """

    _PARSER: tuple[type[Any], ...]
    _depth: int
    _stats: dict[int, tuple[int, int]]  # id(node) -> (expanded nodes, expanded depth)

    def __init__(self, stream: str) -> None:
        first, *rest = self._PARSER  # the parser's first class takes the text, the others nothing
        first.__init__(self, stream)
        for part in rest:
            part.__init__(self)
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(cast(yaml.resolver.Resolver, self))
        self._depth = 0
        self._stats = {}

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        events: Any = self  # the parser's half of the loader (Python's or libyaml's)
        if events.check_event(yaml.AliasEvent):
            event = events.peek_event()
            anchored = self.anchors.get(event.anchor)
            if anchored is not None and id(anchored) not in self._stats:
                raise _Refused(
                    event.start_mark, f"alias *{event.anchor} refers to itself (a recursive structure)"
                )
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > MAX_YAML_DEPTH:
            mark = events.peek_event().start_mark
            raise _Refused(mark, f"nested deeper than {MAX_YAML_DEPTH} levels")
        node = super().compose_node(parent, index)
        assert node is not None  # only an alias composes to nothing
        self._depth -= 1
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        size, depth = 1, 0
        for child in children:
            child_size, child_depth = self._stats[id(child)]
            size += child_size
            depth = max(depth, child_depth)
        if size > MAX_YAML_NODES:
            raise _Refused(
                node.start_mark, f"expands to more than {MAX_YAML_NODES:,} values (through aliases)"
            )
        if depth + 1 > MAX_YAML_DEPTH:
            raise _Refused(node.start_mark, f"nested deeper than {MAX_YAML_DEPTH} levels (through aliases)")
        self._stats[id(node)] = (size, depth + 1)
        return node

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<:` merges are allowed to repeat what they bring in
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:
                continue  # an unhashable key: the base constructor says so
            if first is not None:
                raise _Refused(
                    key_node.start_mark,
                    f"duplicate key {key!r} (first at line {first.start_mark.line + 1}); "
                    "a key may appear once in a mapping: remove or merge one",
                )
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


PURE_PARSER: tuple[type[Any], ...] = (yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser)
"""PyYAML's own parser, in Python."""


def _libyaml_parser() -> tuple[type[Any], ...] | None:
    """libyaml's parser, when PyYAML was built with it (its wheels are), else None."""
    try:
        return (importlib.import_module("yaml._yaml").CParser,)
    except (ImportError, AttributeError):
        return None


LIBYAML_PARSER = _libyaml_parser()
"""libyaml's parser: events come from C (~10x faster), nodes are still composed by ``_Bounds``."""


def bounded_loader(parser: tuple[type[Any], ...]) -> type[_Bounds]:
    """The bounds over ``parser``; ``_Bounds`` comes first in the MRO, so it composes the nodes."""
    bases: tuple[type[Any], ...] = (_Bounds, *parser, yaml.resolver.Resolver)
    loader: type[_Bounds] = type("BoundedLoader", bases, {"_PARSER": parser})
    return loader


_LOADERS = {parser: bounded_loader(parser) for parser in (PURE_PARSER, LIBYAML_PARSER) if parser}


class _Refused(yaml.MarkedYAMLError):
    def __init__(self, mark: yaml.Mark | None, problem: str) -> None:
        super().__init__(problem=problem, problem_mark=mark)


def load_yaml(text: str, parser: tuple[type[Any], ...] | None = None) -> Any:
    """``yaml.safe_load`` with the bounds above; refusals are ``yaml.YAMLError`` with a line mark.

    ``parser`` defaults to libyaml's when PyYAML has it (tests compare it with ``PURE_PARSER``).
    """
    loader: Any = _LOADERS[parser or LIBYAML_PARSER or PURE_PARSER](text)  # with the parser's half
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        if "maximum nesting depth" in str(exc.problem):  # libyaml's own limit (1,000) came first
            raise _Refused(exc.problem_mark, f"nested deeper than {MAX_YAML_DEPTH} levels") from None
        raise
    finally:
        loader.dispose()


def parse_yaml(text: str, path: Path) -> Any:
    """``load_yaml`` for a file a user wrote (a suite, a client configuration): a YAML error is a
    ``SuiteError`` worded one way, ``PATH: line L, column C: not valid YAML: ...``."""
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark else ""
        raise SuiteError(f"{path}:{where} not valid YAML: {getattr(exc, 'problem', exc)}") from exc


__all__ = [
    "LIBYAML_PARSER",
    "MAX_FILE_BYTES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "PURE_PARSER",
    "UnsafeFile",
    "bounded_loader",
    "load_yaml",
    "parse_yaml",
    "read_regular_bytes",
]
