# SPDX-License-Identifier: MIT
"""The `optlog` command of the wheel: the CLI binary installed in this package's _bin folder.

pip puts console scripts on the environment's PATH but cannot place an executable beside torch's
libraries, which the engine links by a path relative to its own folder (cmake/Wheel.cmake). So the
binaries live in the package, and this script hands its arguments to the CLI, replacing itself.
"""
import os
import sys

BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin")


def packaged_binary():
    """The wheel's own optlog, or None where this module came another way (the Debian package, a clone)."""
    path = os.path.join(BIN, "optlog")
    return path if os.access(path, os.X_OK) else None


def main():
    binary = packaged_binary()
    if binary is None:
        sys.exit(f"optlog: this installation of the optlog module has no CLI in {BIN}: "
                 "install the optlog wheel, or the optlog Debian package")
    os.execv(binary, [binary, *sys.argv[1:]])
