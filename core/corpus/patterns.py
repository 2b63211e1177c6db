"""Regular expressions from users' files (alias and family maps), matched in linear time.

Python's ``re`` backtracks: ``^(?P<model>(a+)+)$`` against ``"aaaa...ab"`` takes time exponential in the
length of the id, and an alias file from a colleague can hang ``ddr inspect`` for good.  Patterns
from files a user gives are therefore compiled with RE2 (google-re2, the binding of Google's
linear-time engine), whose matching time grows with the id's length only.  RE2 has no lookaround and
no backreferences; a pattern that uses them is refused with a message that says so.  The patterns
the product ships (``resources/aliases``) are ours, use lookaheads and stay on ``re``.
"""

from __future__ import annotations

import re

__all__ = ["PatternError", "compile_user_pattern", "LINEAR_ENGINE"]

try:  # pragma: no branch - google-re2 is a dependency; without it patterns fall back to re (no hang guard)
    import re2 as _re2

    _OPTIONS = _re2.Options()
    _OPTIONS.log_errors = False  # RE2 would print its own parse errors on stderr; the message below says it
    LINEAR_ENGINE = True
except ImportError:  # pragma: no cover
    _re2 = None
    LINEAR_ENGINE = False

#: What RE2 refuses that Python's re accepts, in words.
_PERL_ONLY = re.compile(r"\(\?[=!]|\(\?<[=!]|\\[1-9]|\(\?P=")


class PatternError(ValueError):
    """A user's pattern cannot be compiled; the message says why and what to write instead."""


def compile_user_pattern(text: str):
    """Compile a pattern from a user's file on the linear-time engine.

    The result has ``fullmatch``, ``search``, ``match`` and ``groupindex`` as :class:`re.Pattern` has.

    Raises
    ------
    PatternError
        A syntax error, or a lookaround or backreference (which a linear-time engine cannot run).
    """
    if not isinstance(text, str):
        raise PatternError(f"the pattern should be text, got {text!r}")
    try:
        re.compile(text)  # Python's own message for plain syntax errors is the clearer one
    except re.error as exc:
        raise PatternError(f"bad regular expression ({exc})") from None
    if _re2 is None:  # pragma: no cover
        return re.compile(text)
    try:
        return _re2.compile(text, _OPTIONS)
    except Exception as exc:  # noqa: BLE001 - re2.error, and TypeError for odd flags
        perl = _PERL_ONLY.search(text)
        if perl:
            raise PatternError(f"uses {perl.group()!r} (a lookaround or backreference); patterns in your files run "
                               "on a linear-time engine (RE2) so that no pattern can hang the program, and it "
                               "has neither: rewrite the pattern without it") from None
        raise PatternError(f"cannot be run by the linear-time engine (RE2: {exc}); simplify the pattern") from None
