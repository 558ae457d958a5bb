"""Exception types shared by every bloomkit structure.

All errors derive from :class:`BloomkitError`; each also derives from the built-in
exception a caller would naturally catch (``ValueError``, ``TypeError``,
``NotImplementedError``), so that
``except ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = [
    "BloomkitError",
    "FormatError",
    "IncompatibleFiltersError",
    "InvalidParameterError",
    "UpdateNotSupportedError",
]


class BloomkitError(Exception):
    """Base class of every error raised by bloomkit."""


class InvalidParameterError(BloomkitError, ValueError, TypeError):
    """A parameter or key has the wrong type or lies outside its allowed range.

    Messages name the parameter, the allowed range and the value received, e.g.
    ``The 'fpr' parameter of BloomFilter must be in (0, 1). Got 1.5 instead.``
    """


class FormatError(BloomkitError, ValueError):
    """Serialized data is truncated, corrupted, foreign or of a newer format version."""


class IncompatibleFiltersError(BloomkitError, ValueError):
    """Two structures cannot be combined (different size, hash count, seed, hash or schema)."""


class UpdateNotSupportedError(BloomkitError, NotImplementedError):
    """The structure cannot be changed after encoding (Bloomier filter)."""
