"""Exceptions opforge raises beyond Python's built-in ones."""

# CommunicationError (a KernelError): a collective failed. Defined by the C++ core, which raises it from the
# collectives' kernels (csrc/kernels/cpu/comm.cc); the Python kernels raise the same class.
from opforge._C import CommunicationError, KernelError

__all__ = ["CommunicationError", "CompileError", "IndexOutOfRangeError", "KernelError", "KernelNotFoundError"]


class KernelNotFoundError(TypeError):
    """No registered kernel accepts the inputs' dtypes on the chosen backend."""


class IndexOutOfRangeError(IndexError, ValueError):
    """An index out of its dim's range (``x[5]`` of 3 rows): an IndexError, as Python's and NumPy's indexing
    raise (a loop over ``__getitem__`` ends on one), and a ValueError, as MindSpore's operators raise for a bad
    argument (NumPy's AxisError is both, likewise)."""


class CompileError(RuntimeError):
    """A user's kernel source did not compile; carries the command and the compiler's messages."""

    def __init__(self, message: str, command=(), output: str = ""):
        super().__init__(message)
        self.command = list(command)
        self.output = output
