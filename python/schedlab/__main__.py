"""``python -m schedlab ARGS``: the ``schedlab`` command line, in-process
(the library's command line: the binary's verbs and flags but ``exec``,
``record`` and ``validate``, which only the binary has; errors are the
binary's one line on stderr with exit status 2)."""

import sys
from typing import List, Optional

from . import _native


def main(argv: Optional[List[str]] = None) -> int:
    """Runs the command line; returns its exit status."""
    args = sys.argv[1:] if argv is None else argv
    try:
        ok = _native.run_argv(["schedlab", *args])
    except _native.SchedlabError as e:
        sys.stdout.flush()
        print(f"schedlab: error: {e}", file=sys.stderr)
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
