"""Exception and warning types shared by every bloomkit structure.

All errors derive from :class:`BloomkitError`; each also derives from the built-in
exception a caller would naturally catch (``ValueError``, ``TypeError``,
``NotImplementedError``), so that
``except ValueError`` keeps working. Every warning bloomkit itself issues (besides
``DeprecationWarning`` for old names) is a :class:`BloomkitWarning`.
"""

from __future__ import annotations

__all__ = [
    "BloomkitError",
    "BloomkitWarning",
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


class BloomkitWarning(UserWarning):
    """Something is probably not what the caller meant, but the answer is still correct.

    Issued at most once per filter for each cause:

    * an add takes a filter past its design (``capacity`` keys at ``fpr``): the filter keeps
      working, but its false positive rate is now above ``fpr`` (``info()["overfilled"]``);
    * a query's key is of a type the filter has never held (``"1"`` or ``1.0`` asked of a filter
      of ``int`` keys): keys of different types never match (``1``, ``1.0`` and ``"1"`` are three
      keys), so the answer is False, and almost certainly not the question meant.

    Python's warning filters decide what happens; to make them errors::

        import warnings, bloomkit
        warnings.simplefilter("error", bloomkit.BloomkitWarning)

    (then every such add or query raises instead of warning, each time). ``bloomkit build
    --strict`` does the same on the command line.
    """
