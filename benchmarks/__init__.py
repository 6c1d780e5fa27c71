"""Benchmarks for langgraph-chronomem; see benchmarks/README.md."""
