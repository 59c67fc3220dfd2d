"""The project's version, kept in one place: `project(edgemt VERSION x.y.z)`
in the top-level CMakeLists.txt. The library (edgemt.h, checked by CMake),
the CLI, the Python package's metadata (pyproject.toml reads the same line)
and the converter all take it from there.

In a checkout the converter reads that line; an installed converter (pip,
no CMakeLists.txt beside it) reads the installed package's metadata.
"""

import os
import re

_PROJECT_LINE = re.compile(r"^project\(edgemt VERSION ([0-9]+\.[0-9]+\.[0-9]+)\b", re.MULTILINE)
_CHECKOUT_CMAKELISTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                    os.pardir, "CMakeLists.txt")


def project_version(cmakelists: str = _CHECKOUT_CMAKELISTS) -> str:
    """"x.y.z" from the checkout's CMakeLists.txt, else from the installed
    package "edgemt"; RuntimeError when neither says."""
    try:
        with open(cmakelists, encoding="utf-8") as handle:
            match = _PROJECT_LINE.search(handle.read())
        if match:
            return match.group(1)
    except OSError:
        pass
    from importlib import metadata
    try:
        return metadata.version("edgemt")
    except metadata.PackageNotFoundError:
        raise RuntimeError("edgemt_tools: no version: neither a checkout's CMakeLists.txt "
                           f"({os.path.normpath(cmakelists)}) nor an installed edgemt "
                           "package") from None
