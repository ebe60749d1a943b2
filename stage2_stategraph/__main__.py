"""python -m stage2_stategraph [-q QUESTION] [--graph] [--temperature T] [--max-steps N] [--json] ..."""
from shared.cli import main
from stage2_stategraph.agent import mermaid

raise SystemExit(main("stategraph", graph=mermaid))
