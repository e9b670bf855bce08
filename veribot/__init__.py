"""veribot: a code-review bot whose verdicts are proven, refuted, or honestly inconclusive."""

__version__ = "0.1.0"
