"""What the tests and the benchmarks both run on: private servers and a model-free
embedding, so neither imports the other's modules.

- `pg`: a private PostgreSQL 15 server (initdb into a temp directory, a free port)
  and the `pg_server` fixture;
- `chroma_server`: a private `chroma run` server;
- `hashed`: a deterministic embedding from word hashes, for exact-search checks.
"""
