"""Exceptions and warnings shared by the core."""


class DDRWarning(UserWarning):
    """Warning category of DDR Explorer (turned into errors in the test suite)."""
