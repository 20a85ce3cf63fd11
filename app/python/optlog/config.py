# SPDX-License-Identifier: MIT
"""A run's configuration as the study keeps it: flat dotted keys with plain values.

The study stores configs as TOML, which has no null and no objects in arrays, and `optlog compare`
and `optlog runs --filter train.lr:0.001` read the dotted keys; so the flattening is strict, and
a config it cannot store is refused before training starts, not found wrong afterwards.
"""
import argparse
import math
import os

ALLOWED = "a bool, int, float, str, os.PathLike, None (left out), a list or tuple of those, or a dict"

_SCALARS = (bool, int, float, str)


def _plain(key, value):
    """The value as the study stores it, or a TypeError naming the key."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)  # argparse's type=pathlib.Path is common; the path is what matters
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"optlog: config key '{key}' is {value!r}: JSON and TOML hold only finite numbers")
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(f"{key}[{i}]", item) for i, item in enumerate(value)]
    raise TypeError(f"optlog: config key '{key}' holds a {type(value).__module__}.{type(value).__qualname__} "
                    f"({value!r:.60}); a config value must be {ALLOWED}")


def _flatten_into(flat, prefix, mapping):
    for key, value in mapping.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"optlog: config key {prefix + repr(key)} is not a non-empty string")
        dotted = prefix + key
        if isinstance(value, dict):
            _flatten_into(flat, dotted + ".", value)
            continue
        if value is None:
            continue  # TOML has no null: an unset option is simply not in the config
        if isinstance(value, (list, tuple)) and any(item is None for item in value):
            raise TypeError(f"optlog: config key '{dotted}' holds None in a list; a config value must be {ALLOWED}")
        if dotted in flat:
            raise ValueError(f"optlog: config key '{dotted}' is given twice (once dotted, once nested)")
        flat[dotted] = _plain(dotted, value)


def flatten_config(config, seed=None):
    """The config as {dotted key: value}: a dict (nested dicts become dotted keys) or an
    argparse.Namespace; None values are left out. With `seed` and no "seed" key, adds "seed".

    Raises TypeError for a value the study cannot store and ValueError for a key that is both a
    value and the prefix of another ("a" and "a.b"), each naming the key."""
    if config is None:
        config = {}
    elif isinstance(config, argparse.Namespace):
        config = vars(config)
    elif not isinstance(config, dict):
        raise TypeError(f"optlog: config must be a dict or an argparse.Namespace, not a "
                        f"{type(config).__module__}.{type(config).__qualname__}; pass vars(obj) or a dict "
                        f"of the options that define the run")
    flat = {}
    _flatten_into(flat, "", config)
    if seed is not None and "seed" not in flat:
        flat["seed"] = _plain("seed", seed)
    for key in flat:
        parts = key.split(".")
        for n in range(1, len(parts)):
            prefix = ".".join(parts[:n])
            if prefix in flat:
                raise ValueError(f"optlog: config key '{prefix}' is a value and also the prefix of '{key}'; "
                                 f"the study cannot keep both: rename one")
    return flat
