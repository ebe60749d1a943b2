"""python -m stage3_pure_loop [-q QUESTION] [--temperature T] [--max-steps N] [--json] ..."""
from shared.cli import main

raise SystemExit(main("pure_loop"))
