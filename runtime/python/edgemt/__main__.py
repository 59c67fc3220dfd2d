"""`python -m edgemt ...` and the `edgemt` console script: the edgemt CLI
(translate, inspect, bench), the same program as the C++ build's `edgemt`.

The CLI is a native executable: a pip install puts it in the package
(edgemt/bin/edgemt); in a checkout it is build/edgemt; $EDGEMT_CLI names
another. This replaces the Python process with it (exec), so its exit
status, signals and standard streams are the CLI's own.
"""

import os
import sys
from typing import List, Optional


def cli_path() -> Optional[str]:
    """The edgemt executable this package runs, or None when there is none."""
    if os.environ.get("EDGEMT_CLI"):
        return os.environ["EDGEMT_CLI"]
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, "bin", "edgemt"),
                 os.path.normpath(os.path.join(here, "..", "..", "..", "build", "edgemt"))):
        if os.access(path, os.X_OK):
            return path
    return None


def main(argv: Optional[List[str]] = None) -> int:
    """Runs the CLI with `argv` (default: this process's arguments)."""
    arguments = sys.argv[1:] if argv is None else argv
    path = cli_path()
    if path is None:
        print("edgemt: the edgemt executable is not installed with this package "
              "(set EDGEMT_CLI to its path)", file=sys.stderr)
        return 2
    try:
        os.execv(path, ["edgemt"] + arguments)
    except OSError as e:
        print(f"edgemt: cannot run {path}: {e.strerror}", file=sys.stderr)
        return 2
    return 0  # not reached: execv returns only by raising


if __name__ == "__main__":
    sys.exit(main())
