# SPDX-License-Identifier: MIT
"""The wheel's torch requirement, for scikit-build-core ([[tool.dynamic-metadata]] in pyproject.toml).

LibTorch's C++ ABI changes between minor versions, so a wheel whose engine was linked against torch
X.Y requires torch==X.Y.* and nothing else. The sdist requires any torch the engine builds against
(the oldest is Debian's 1.13: core/engine/compat), and marks the field as one its wheel narrows.
"""
import importlib.metadata
import re

OLDEST_TORCH = "1.13"  # core/engine/compat's oldest LibTorch


class Provider:
    def __init__(self):
        self._state = "wheel"

    def build_state(self, build_state):
        self._state = build_state

    def dynamic_wheel(self, settings):
        return {"dependencies": True}

    def dynamic_metadata(self, settings, project):
        if self._state == "sdist":
            return {"dependencies": [f"torch>={OLDEST_TORCH}"]}
        return {"dependencies": [f"torch=={built_against()}.*"]}


def built_against():
    """The environment's torch, X.Y; a clear refusal where there is none."""
    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        raise SystemExit(
            "optlog: this environment has no torch, and optlog's engine links the torch it trains with: "
            "install torch first, then build without isolation (pip install --no-build-isolation ...)") from None
    match = re.match(r"(\d+)\.(\d+)", version)
    if not match:
        raise SystemExit(f"optlog: cannot read torch's version '{version}' as X.Y")
    return f"{match.group(1)}.{match.group(2)}"
