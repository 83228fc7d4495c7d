"""`python -m core.store.migrations revision "<message>"` | `heads` (see core/store/migrate.py)."""

import sys

from core.store.migrate import main

raise SystemExit(main(sys.argv[1:]))
