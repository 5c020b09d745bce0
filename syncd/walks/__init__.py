"""What every slice's watch walkers share: the walker's report and early ends, a cursor walk's position.

The slices' ``walk.py`` import it; the passes over the watch lists (:mod:`syncd.passes`) run them.
"""
