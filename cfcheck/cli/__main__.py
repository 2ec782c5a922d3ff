"""``python -m cfcheck.cli``: the ``cfcheck`` command."""

from cfcheck.cli import main

raise SystemExit(main())
