"""Retraction Watch data as a local source, and the one retraction verdict syncd gives for a work.

Crossref publishes the Retraction Watch database as one CSV (``retraction_watch.csv`` in the git
repository ``crossref/retraction-watch-data``, replaced each working day). This package reads it
(:mod:`~syncd.retractions.csvfile`), keeps its newest version in the store with the history of
versions (:mod:`~syncd.retractions.storage`, :mod:`~syncd.retractions.importer`), and combines it
with what Crossref says of a work into one verdict (:mod:`~syncd.retractions.verdict`, pure;
:mod:`~syncd.retractions.lookups` gathers the inputs).
"""
