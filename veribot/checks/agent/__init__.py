"""The agent pipeline: ask a model, formalize its reasoning into facts, check them."""
