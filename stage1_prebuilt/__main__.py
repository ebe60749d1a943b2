"""python -m stage1_prebuilt [-q QUESTION] [--temperature T] [--max-steps N] [--json] ..."""
from shared.cli import main

raise SystemExit(main("prebuilt"))
