"""Exceptions raised by mace. Every error the engine or a converter reports is a MaceError."""


class MaceError(Exception):
    """Base class of every mace error."""


class InvalidModelError(MaceError):
    """The model (graph or weights) is corrupt or inconsistent."""


class InvalidInputError(MaceError):
    """An input's name, shape or dtype does not fit the model."""


class UnsupportedError(MaceError):
    """The model uses something mace cannot run or convert; the message names it."""


class OutOfResourcesError(MaceError, MemoryError):
    """The engine would need more memory than it may take (a run arena above the ceiling:
    Session's max_arena_bytes, MACE_MAX_ARENA_BYTES) or than it could allocate; the message
    gives the sizes. Also a MemoryError, as Python's own allocation failures are."""


class InvalidArgumentError(MaceError, ValueError):
    """A session option or call argument that cannot be used (num_threads, affinity, device,
    data_format, rounds); also a ValueError, as Python's own argument errors are."""
