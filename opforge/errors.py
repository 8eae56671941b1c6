"""Exceptions opforge raises beyond Python's built-in ones."""

# CommunicationError (a KernelError): a collective failed. Defined by the C++ core, which raises it from the
# collectives' kernels (csrc/kernels/cpu/comm.cc); the Python kernels raise the same class.
from opforge._C import CommunicationError, KernelError

__all__ = ["CommunicationError", "CompileError", "KernelError", "KernelNotFoundError"]


class KernelNotFoundError(TypeError):
    """No registered kernel accepts the inputs' dtypes on the chosen backend."""


class CompileError(RuntimeError):
    """A user's kernel source did not compile; carries the command and the compiler's messages."""

    def __init__(self, message: str, command=(), output: str = ""):
        super().__init__(message)
        self.command = list(command)
        self.output = output
