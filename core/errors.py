"""Exceptions and warnings shared by the core."""


class DDRWarning(UserWarning):
    """Warning category of DDR Explorer (turned into errors in the test suite)."""


def shown(value) -> str:
    """``repr`` of a value for an error message, numpy scalars shown as the plain number a user typed.

    NumPy 2 prints ``repr(np.int64(2))`` as ``np.int64(2)``; a message should say ``2``.  Strings
    keep their quotes (so an empty or padded value is visible); arrays of one element show it.
    """
    item = getattr(value, "item", None)
    if item is not None and getattr(value, "ndim", None) == 0:  # numpy scalar or 0-d array
        value = item()
    return repr(value)
