"""YAML read with bounds: a recipe file of at most :data:`MAX_RECIPE_BYTES`, and a document of at
most :data:`MAX_YAML_VALUES` values once its aliases are expanded (an alias bomb is refused before
anything expands it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from curation.errors import ConfigError

#: The most values (mappings, lists and scalars, YAML aliases expanded) one YAML document may hold:
#: a recipe has ~1,000; an alias bomb ("billion laughs") is refused before anything expands it.
MAX_YAML_VALUES = 100_000
#: A recipe file larger than this is refused before it is parsed (the shipped one is ~20 kB).
MAX_RECIPE_BYTES = 1 << 20


def read_text(src: Path, limit: int = MAX_RECIPE_BYTES) -> str:
    """The UTF-8 text of recipe file ``src``, refused past ``limit`` bytes (read no further: a device
    such as /dev/zero never ends)."""
    with open(src, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ConfigError(f"recipe {src} holds more than {limit:,} bytes; is it the right file?")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"recipe {src} is not UTF-8 text (byte {exc.start}); is it the right file?") from None


class _OnceLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping (PyYAML keeps the last one
    without a word: a second ``minhash_dedup:`` section would replace the first). Keys brought in
    by a merge key (``<<: *base``) may be given again: that is what a merge is for."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, tuple[int, int]] = {}
        for key_node, _ in node.value if isinstance(node, yaml.MappingNode) else ():
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            _check_spaced_colon(node, key_node, _)
            key, mark = self.construct_object(key_node, deep=True), key_node.start_mark
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: the base loader says so
                continue
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice, {self._places(first, (mark.line + 1, mark.column + 1))}: keep "
                    "one (the second would replace the first)", key_node.start_mark)
            seen[key] = (mark.line + 1, mark.column + 1)
        return super().construct_mapping(node, deep=deep)

    def _places(self, first: tuple[int, int], second: tuple[int, int]) -> str:
        """Where the two keys are: their lines, or their columns when both are on one line (of a
        one-line text, such as a ``key=value`` override, the line is left out)."""
        if first[0] != second[0]:
            return f"on line {first[0]} and on line {second[0]}"
        one_line = "\n" not in str(getattr(self, "buffer", "")).strip("\0\n")
        return f"at columns {first[1]} and {second[1]}" + ("" if one_line else f" of line {first[0]}")


def _check_spaced_colon(node: yaml.MappingNode, key_node: yaml.Node, value_node: yaml.Node) -> None:
    """Refuse ``{zh:0.3}``: in a flow mapping a plain key holding a colon with no value is a value
    whose colon lacks its space (YAML reads the key ``"zh:0.3"`` with the value null)."""
    if (node.flow_style and isinstance(key_node, yaml.ScalarNode) and key_node.style is None and ":" in str(key_node.value)
            and isinstance(value_node, yaml.ScalarNode) and value_node.tag == "tag:yaml.org,2002:null" and value_node.value == ""):
        key, _, value = str(key_node.value).partition(":")
        raise yaml.constructor.ConstructorError(
            None, None, f"{key_node.value!r} reads as a key with no value: YAML needs a space after the colon "
            f"({{{key}: {value}}})", key_node.start_mark)


def load_yaml(text: str, where: str) -> Any:
    """``yaml.safe_load`` that refuses a key given twice in one mapping, and a document of more than
    :data:`MAX_YAML_VALUES` values once its aliases are expanded, or one that contains itself (what
    ``&a [*a]`` builds).

    >>> try:
    ...     load_yaml("a: 1\\nb: 2\\na: 3\\n", "x")
    ... except yaml.YAMLError as exc:
    ...     print(exc.problem)
    key 'a' is given twice, on line 1 and on line 3: keep one (the second would replace the first)
    """
    try:
        loader = _OnceLoader(text)  # what yaml.load does, with a SafeLoader of our own
        try:
            value = loader.get_single_data()
        finally:
            loader.dispose()
        count_values(value, where)
    except RecursionError:
        raise ConfigError(f"{where}: the YAML is nested too deeply; a recipe needs a few levels") from None
    return value


def count_values(value: Any, where: str, limit: int = MAX_YAML_VALUES) -> int:
    """Values in ``value`` with shared parts counted each time they appear (linear in the distinct parts)."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()

    def size(node: Any) -> int:
        if not isinstance(node, (dict, list, tuple)):
            return 1
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_:
            raise ConfigError(f"{where}: a YAML value contains itself (an alias to its own anchor); write the values out")
        open_.add(key)
        children = list(node.keys()) + list(node.values()) if isinstance(node, dict) else list(node)
        total = 1
        for child in children:
            total += size(child)
            if total > limit:
                raise ConfigError(f"{where}: the YAML expands to more than {limit:,} values (through aliases '*'); "
                                  "refused: a recipe needs a few thousand at most")
        open_.discard(key)
        sizes[key] = total
        return total

    return size(value)
