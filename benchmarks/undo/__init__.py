"""Natural-language undo: its latency, its first catch-up, and which version it
resolves to on agent memory and on LoCoMo."""
