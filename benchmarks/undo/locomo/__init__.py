"""The LoCoMo rollback benchmark's parts: the data, the requests, the metrics."""
