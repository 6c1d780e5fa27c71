"""LangGraph's own store and saver test suites, run against chronomem.

`python -m tests.langgraph_suites` downloads the sdists of the installed
`langgraph-checkpoint-sqlite` and `langgraph-checkpoint-postgres` (cached under
`~/.cache/langgraph-chronomem/`), runs their tests with `ChronoStore` and
`ChronoCheckpointer` swapped in by the plugin `_chronomem_suites.py`, and
prints a table per suite; every failure must be in `expected.py`, and every
test listed there must still fail. `tests/test_langgraph_suites.py` runs it in CI.
"""
