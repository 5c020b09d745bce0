"""The DataCite slice: works (datasets, software, preprints) from ``api.datacite.org``, local-first."""
