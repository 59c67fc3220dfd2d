"""YAML and JSON parsing that refuses a key given twice.

PyYAML's loaders and Python's json keep the last of two equal keys without
a word, so a vocabulary with one piece twice converted (the last id won and
the translations changed), and a duplicated option in decoder.yml or
config.json silently meant its last value, while Marian's yaml-cpp may read
another one. Here the second occurrence is an error naming the key.
"""

import yaml

_MERGE_TAG = "tag:yaml.org,2002:merge"


class DuplicateKeyError(yaml.YAMLError):
    """A mapping gives one key twice; str() is one line naming it."""


class _RefuseDuplicates:
    """construct_mapping of a loader, refusing a key that is already there."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            first_line = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:  # `<<: *defaults` may override on purpose
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    earlier = first_line.get(key)
                except TypeError:  # unhashable: the loader itself reports it
                    continue
                line = key_node.start_mark.line + 1
                if earlier is not None:
                    raise DuplicateKeyError(f"key {key!r} appears twice (lines {earlier} and "
                                            f"{line})")
                first_line[key] = line
        return super().construct_mapping(node, deep=deep)


class SafeLoader(_RefuseDuplicates, yaml.SafeLoader):
    """yaml.SafeLoader (no code runs) that refuses duplicate keys."""


class PlainLoader(_RefuseDuplicates, yaml.BaseLoader):
    """yaml.BaseLoader (every scalar a string) that refuses duplicate keys."""


def json_object(pairs):
    """json's object_pairs_hook: a dict, or ValueError naming a key given twice."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} appears twice")
        out[key] = value
    return out
