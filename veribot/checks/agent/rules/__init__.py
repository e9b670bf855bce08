"""Data files of the checks: the predicate vocabulary and the Datalog verification conditions."""
