"""The errors a user can cause. Each carries one message meant to be shown as it is.

Every one is a :class:`SentretError`, and so a ``ValueError``; a bad argument of the wrong *type*
(:class:`ArgumentTypeError`) is also a ``TypeError``. The CLI prints any of them as one line and
exits 2; the app shows it with ``st.error``. Anything else that escapes is a bug.
"""

from __future__ import annotations


class SentretError(ValueError):
    """Base of every user-facing error: the CLI prints it and exits 2, the app shows ``st.error``.

    A message about the caller's arguments writes each as a Python call does, with its value (``n_process=0``),
    and lists their names in ``arguments``; the CLI prints each as the flag that set it (``--n-process 0``), so
    the library never names its command line's flags.
    """

    def __init__(self, *args: object, arguments: tuple[str, ...] = ()) -> None:
        super().__init__(*args)
        self.arguments = arguments


class CorpusError(SentretError):
    """A corpus the user supplied cannot be read; the message says why and where."""


class IndexFormatError(SentretError):
    """A folder is not a sentret index, is of another format version, or is damaged."""


class QueryError(SentretError):
    """A query that cannot be scored (empty, or only stop words and punctuation)."""


class ArgumentError(SentretError):
    """A bad argument of a public function; the message names the argument, the value it got and
    what is allowed (raised by ``sentret_core.checks``)."""


class ArgumentValueError(ArgumentError):
    """An argument has the right type but a value outside its allowed range (``k=0``, a sentence id ≥ N)."""


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of a public function has the wrong type (``k=1.5``, ``k='10'``, ``labels=[None]``).

    Both a ``TypeError`` and a :class:`SentretError`: ``except TypeError`` catches it as Python
    code expects, and the CLI and the app show it as a user error.
    """
