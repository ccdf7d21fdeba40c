"""The reader's one exception type."""


class StoreError(Exception):
    """A path that is not a linsweep store, a damaged or newer file, or an unknown name.

    The message names the file (or the table) and the problem, as linsweep's own errors do.
    """


class UnknownNameError(StoreError, KeyError):
    """A table or shard that the store does not have (the message suggests the closest name)."""

    def __str__(self):  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
