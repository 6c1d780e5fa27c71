"""What every benchmark shares: the report, the stores and subjects under test,
two trees side by side, the plots."""
