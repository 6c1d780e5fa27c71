"""Processes killed mid-write: the store reopens whole."""
