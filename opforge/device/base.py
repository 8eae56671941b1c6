"""The ``Device`` interface and the table of registered devices."""

from __future__ import annotations

__all__ = ["BACKENDS", "Device", "get_device", "register_device", "register_device_factory", "available_devices"]

# Every backend kernels may be registered for: the one list of device names. A backend's kernels
# and op info can be registered before (or without) its device being usable in this process.
BACKENDS = ("CPU", "GPU")

_devices: dict = {}
_factories: dict = {}  # name -> () -> Device: a device made when first asked for (the GPU: CuPy)


class Device:
    """One backend's arrays. Subclasses implement every method for their array type.

    Arrays a device hands to kernels are *kernel-ready*: C-contiguous, aligned, native byte order.
    """

    # A device is the process's one instance of its backend (its allocator, streams, communicators):
    # copying a Tensor or a Cell shares it.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        # pickled by name: unpickled, it is the other process's instance (never its communicators or pool)
        return (get_device, (self.name,))

    name: str = ""
    array_type: type = object

    def __repr__(self) -> str:
        return self.name

    # -- creation and copies ------------------------------------------------------------------
    def asarray(self, data, np_dtype):
        """An array of this device that owns a kernel-ready copy of ``data`` (host data or an array
        of any device) with NumPy dtype ``np_dtype`` (None: the data's own)."""
        raise NotImplementedError

    def share(self, array):
        """``array`` itself when it is this device's and kernel-ready (no copy), else a ready copy."""
        raise NotImplementedError

    def to_host(self, array, copy: bool = True):
        """A NumPy array with the data of ``array`` (a copy unless ``copy`` is False and the data is
        already on the host; then a read-only view)."""
        raise NotImplementedError

    def empty(self, shape: tuple, np_dtype):
        raise NotImplementedError

    def full(self, shape: tuple, value, np_dtype):
        raise NotImplementedError

    def scalar(self, value, np_dtype):
        """A weak Python scalar as a 0-d array."""
        raise NotImplementedError

    def cast(self, array, np_dtype):
        """A new array of ``np_dtype`` (NumPy's casting rules)."""
        raise NotImplementedError

    def write(self, dst, src) -> None:
        """Copy ``src`` into ``dst`` in place (same shape; cast to ``dst``'s dtype)."""
        raise NotImplementedError

    def view(self, array, offset: int, shape: tuple):
        """A view of ``shape`` over the elements of the 1-D C-contiguous ``array`` from ``offset`` on
        (the gradient buckets' slots): writing it writes ``array``."""
        raise NotImplementedError

    def is_writable(self, array) -> bool:
        raise NotImplementedError

    def is_kernel_ready(self, array) -> bool:
        raise NotImplementedError

    def shares_memory(self, a, b) -> bool:
        raise NotImplementedError

    def memory_bytes(self) -> int:
        """The memory the device has in all: no set of outputs may need more."""
        raise NotImplementedError

    def synchronize(self) -> None:
        """Wait for this device's queued work (no-op on the CPU)."""

    # -- communication ---------------------------------------------------------------------------
    # A communicator per group (``opforge.communication`` makes them: MPI for the CPU, NCCL for the
    # GPU); the collective kernels ask the device of their arrays for their group's.
    def communicator(self, group: str):
        """The communicator of ``group`` on this device, or None."""
        return self.__dict__.get("_communicators", {}).get(group)

    def set_communicator(self, group: str, communicator) -> None:
        """Own ``communicator`` for ``group`` (None: drop the group's)."""
        comms = self.__dict__.setdefault("_communicators", {})
        if communicator is None:
            comms.pop(group, None)
        else:
            comms[group] = communicator


def register_device(device: Device) -> Device:
    """Make ``device`` available under ``device.name`` (one of ``BACKENDS``)."""
    if device.name not in BACKENDS:
        raise ValueError(f"For 'register_device', the 'name' must be one of {BACKENDS}, but got {device.name!r}.")
    _devices[device.name] = device
    return device


def register_device_factory(name: str, factory) -> None:
    """How to make the device of backend ``name`` when it is first asked for and none is registered:
    ``factory()`` returns a Device or raises a RuntimeError saying why there is none."""
    _factories[name] = factory


def get_device(name: str) -> Device:
    """The device registered for backend ``name``, or a clear error naming what is available."""
    device = _devices.get(name)
    if device is None:
        if name not in BACKENDS:
            raise ValueError(f"The device must be one of {BACKENDS}, but got {name!r}.")
        factory = _factories.get(name)
        if factory is None:
            raise RuntimeError(f"The {name} device is not available here (available: {available_devices()}).")
        try:
            device = register_device(factory())
        except RuntimeError as e:
            raise RuntimeError(f"The {name} device is not available here: {e}") from e
    return device


def available_devices() -> tuple:
    """The backends that can hold tensors and run kernels in this process."""
    return tuple(n for n in BACKENDS if n in _devices)
