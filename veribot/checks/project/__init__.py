"""The project around a function: changed units, package loading, module rewrites."""
