"""The package version, in a module of its own: modules of every layer can import it without
importing the package's public facade (:mod:`ragreport`, which names every layer)."""

__version__ = "0.1.0"
