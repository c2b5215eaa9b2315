"""`python -m mace ...` is the `mace` command (mace.cli)."""
from .cli import main

raise SystemExit(main())
