"""A store's and a checkpointer's operations: latency against LangGraph's own,
bytes a commit, exact search recall."""
