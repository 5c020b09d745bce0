"""The passes over what every slice holds, run by the daemon and the CLI.

Revalidation (:mod:`~syncd.passes.refresh`), the watch lists (:mod:`~syncd.passes.watches`) and their
sync (:mod:`~syncd.passes.sync`): each reads the composition root (:mod:`syncd.registry`).
"""
