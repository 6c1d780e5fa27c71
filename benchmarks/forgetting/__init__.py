"""What forgetting costs: redact and compact as the store grows."""
