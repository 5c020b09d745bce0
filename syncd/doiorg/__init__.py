"""The doi.org slice: the registration-agency kind (names, store rules, hooks)."""
