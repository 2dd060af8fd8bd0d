"""Error types. Each subclasses a built-in, so ``except ValueError`` still works."""

from __future__ import annotations


class BioaccelError(Exception):
    """Base class of every error bioaccel raises on purpose."""


class SequenceFormatError(BioaccelError, ValueError):
    """A sequence file is empty, unreadable, or not in the expected format."""


class AlphabetError(BioaccelError, ValueError):
    """A sequence holds a letter outside the alphabet it is read with."""


class DuplicateIdError(BioaccelError, ValueError):
    """Two records share one identifier."""


class AlignmentLengthError(BioaccelError, ValueError):
    """Sequences of an alignment do not all have the same length."""


class ModelError(BioaccelError, ValueError):
    """An unknown distance model, or a model that does not fit the input."""


class MatrixFormatError(BioaccelError, ValueError):
    """A distance-matrix file cannot be parsed."""


class BackendUnavailableError(BioaccelError, RuntimeError):
    """A backend was named explicitly but cannot run here; the message says why."""


class NativeCoreError(BackendUnavailableError, ImportError):
    """The compiled core ``bioaccel._native`` cannot be loaded (a checkout never built, a
    build for another Python); the message says why and how to build it. The one error of a
    missing core, wherever it is needed: an ImportError (a module is missing) and a
    BackendUnavailableError (the ``cpu`` backend and the compiled paths cannot run)."""


class DeviceSelectionError(BioaccelError, ValueError):
    """``devices=`` names a GPU that is not there; the message lists the valid ids."""


class DeviceError(BioaccelError, RuntimeError):
    """A GPU failed while working (its unfinished tiles go to the other devices)."""


class LeaseTimeoutError(BioaccelError, TimeoutError):
    """A GPU lease was not granted within its timeout; the message names the holders."""


class SchedulerConfigError(BioaccelError, ValueError):
    """A topology, workload, trace or scheduler setting is malformed (names file, row, key)."""


class AccountError(BioaccelError, PermissionError):
    """A fair-share account that the shares file does not let this Unix user charge."""


class QueueLimitError(BioaccelError, RuntimeError):
    """A user already has as many waiting GPU requests as the run directory allows."""


class ArbiterUnavailableError(BioaccelError, ConnectionError):
    """The GPU arbiter service is in force but refuses connections, died or closed the
    connection: nothing is leased (clients fail closed)."""


class ArbiterWarning(UserWarning):
    """A file in the shared GPU run directory was skipped (malformed, hostile or not owned
    as expected); the message names it and its owner."""


class ThreadCountError(BioaccelError, ValueError):
    """A ``threads`` value outside 0 (all cores) .. the cap of :mod:`bioaccel._core.threads`."""


class InsufficientMemoryError(BioaccelError, MemoryError):
    """A run would need more memory than the machine has available; raised before the
    work starts, naming what needs it and how to ask for less."""
