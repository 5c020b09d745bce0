"""The shared request budget: pools, token buckets in the database, the lab fallback, settings."""
