"""The dlsys-suite version, in a module of its own: the cache keys, the scaffold and the kit's
deprecation schedule read it without importing :mod:`suite`'s plugin contract (``suite`` re-exports
it as ``suite.__version__``)."""

__version__ = "0.3.13"
