"""Several processes on one store: writers on one file or one server, workers on
one log and one Chroma."""
