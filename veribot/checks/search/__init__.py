"""Search for counterexamples: differential runs, generated inputs, the tripwire."""
