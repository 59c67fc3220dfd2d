"""Files of the C++ project the converter reads, so that each fact exists
once: the limits the runtime enforces (runtime/include/edgemt/limits.h,
runtime/models/<family>/config.h) and every family's tensor table
(schema/<family>_tensors.def).

In a checkout they are read where they are. A pip install has no checkout:
it carries copies of them in the package, under edgemt_tools/project/ with
the checkout's layout (platforms/cmake/EdgemtPythonPackage.cmake).
"""

import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_CHECKOUT = os.path.normpath(os.path.join(_HERE, os.pardir, os.pardir))
_PACKAGED = os.path.join(_HERE, "project")


def _root() -> str:
    if os.path.isfile(os.path.join(_CHECKOUT, "runtime", "include", "edgemt", "limits.h")):
        return _CHECKOUT
    return _PACKAGED


PROJECT_ROOT = _root()


def project_path(*parts: str) -> str:
    """The path of `parts` (relative to the checkout's root, e.g. "schema",
    "rnn_tensors.def") in the checkout, or in the package's copy."""
    return os.path.join(PROJECT_ROOT, *parts)
