"""GPU memory two processes share through the CUDA driver's virtual memory API.

GPU memory two processes share, through the CUDA driver's virtual memory API: an allocation made
with a POSIX file descriptor as its shareable handle, passed over the control socket, and mapped by
the other side.

Legacy CUDA IPC handles do not work across the pid namespaces that separate a sandboxed runner from
the judge; descriptors do (benchmarks/gpu_trust_probe.py, on an H200). Two uses:
  the judge's inputs   the judge allocates a call's input buffer, the runner maps it: a candidate
                       sees each call's inputs only once the call has started
  a runner's outputs   the runner's torch allocates with expandable segments, whose pages are
                       such allocations; the runner exports the pages that hold an output (once
                       per page) and the judge reads the output in place while the runner is frozen

Both sides import this file, so it stays free of policy. Nothing here initialises CUDA: torch must
have made its context current on the calling thread.
"""
from __future__ import annotations

import ctypes

_POSIX_FD = 1  # CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
_PINNED = 1  # CU_MEM_ALLOCATION_TYPE_PINNED
_ON_DEVICE = 1  # CU_MEM_LOCATION_TYPE_DEVICE
_READ_WRITE = 3  # CU_MEM_ACCESS_FLAGS_PROT_READWRITE

_driver = None


class DeviceMemoryError(RuntimeError):
    pass


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _AllocProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", _Location),
                ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", _AllocFlags)]


class _AccessDesc(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


def driver() -> ctypes.CDLL:
    global _driver
    if _driver is None:
        try:
            _driver = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise DeviceMemoryError(f"the CUDA driver library is not loadable: {e}") from None
    return _driver


def _check(name: str, rc: int) -> None:
    if rc != 0:
        text = ctypes.c_char_p()
        driver().cuGetErrorName(rc, ctypes.byref(text))
        raise DeviceMemoryError(f"{name} failed: {text.value.decode() if text.value else rc}")


def _device() -> int:
    import torch
    return torch.cuda.current_device()


def _prop(device: int) -> _AllocProp:
    p = _AllocProp()
    p.type, p.requestedHandleTypes = _PINNED, _POSIX_FD
    p.location.type, p.location.id = _ON_DEVICE, device
    return p


def granularity(device: int | None = None) -> int:
    g = ctypes.c_size_t()
    p = _prop(_device() if device is None else device)
    _check("cuMemGetAllocationGranularity", driver().cuMemGetAllocationGranularity(ctypes.byref(g), ctypes.byref(p), 0))
    return g.value


def _map(handle: int, size: int, device: int) -> int:
    d = driver()
    ptr = ctypes.c_uint64()
    _check("cuMemAddressReserve", d.cuMemAddressReserve(ctypes.byref(ptr), ctypes.c_size_t(size), ctypes.c_size_t(0),
                                                        ctypes.c_uint64(0), ctypes.c_ulonglong(0)))
    rc = d.cuMemMap(ptr, ctypes.c_size_t(size), ctypes.c_size_t(0), ctypes.c_uint64(handle), ctypes.c_ulonglong(0))
    if rc == 0:
        access = _AccessDesc()
        access.location.type, access.location.id, access.flags = _ON_DEVICE, device, _READ_WRITE
        rc = d.cuMemSetAccess(ptr, ctypes.c_size_t(size), ctypes.byref(access), ctypes.c_size_t(1))
        if rc != 0:
            d.cuMemUnmap(ptr, ctypes.c_size_t(size))
    if rc != 0:
        d.cuMemAddressFree(ptr, ctypes.c_size_t(size))
        _check("cuMemMap/cuMemSetAccess", rc)
    return ptr.value


class Mapping:
    """A shareable allocation mapped into this process: made here (create) or received as a
    descriptor (attach). ptr is this process's address of its first byte."""

    def __init__(self, handle: int, ptr: int, size: int):
        self.handle, self.ptr, self.size = handle, ptr, size

    @classmethod
    def create(cls, nbytes: int) -> "Mapping":
        device = _device()
        g = granularity(device)
        size = max(g, (nbytes + g - 1) // g * g)
        handle = ctypes.c_uint64()
        p = _prop(device)
        _check("cuMemCreate", driver().cuMemCreate(ctypes.byref(handle), ctypes.c_size_t(size), ctypes.byref(p),
                                                   ctypes.c_ulonglong(0)))
        try:
            return cls(handle.value, _map(handle.value, size, device), size)
        except DeviceMemoryError:
            driver().cuMemRelease(ctypes.c_uint64(handle.value))
            raise

    @classmethod
    def attach(cls, fd: int, size: int) -> "Mapping":
        """Maps the allocation a descriptor stands for; size must be its whole size. The descriptor
        stays the caller's."""
        handle = ctypes.c_uint64()
        _check("cuMemImportFromShareableHandle", driver().cuMemImportFromShareableHandle(
            ctypes.byref(handle), ctypes.c_void_p(fd), ctypes.c_int(_POSIX_FD)))
        try:
            return cls(handle.value, _map(handle.value, size, _device()), size)
        except DeviceMemoryError:
            driver().cuMemRelease(ctypes.c_uint64(handle.value))
            raise

    def export(self) -> int:
        """A new descriptor for this allocation (the caller closes it)."""
        fd = ctypes.c_int(-1)
        _check("cuMemExportToShareableHandle", driver().cuMemExportToShareableHandle(
            ctypes.byref(fd), ctypes.c_uint64(self.handle), ctypes.c_int(_POSIX_FD), ctypes.c_ulonglong(0)))
        return fd.value

    def tensor(self, offset: int, nbytes: int):
        """The bytes [offset, offset + nbytes) as a uint8 CUDA tensor that aliases the mapping."""
        if offset < 0 or nbytes < 0 or offset + nbytes > self.size:
            raise DeviceMemoryError(f"bytes {offset}..{offset + nbytes} lie outside a mapping of {self.size}")
        return tensor_at(self.ptr + offset, nbytes)

    def close(self) -> None:
        if self.ptr:
            d = driver()
            d.cuMemUnmap(ctypes.c_uint64(self.ptr), ctypes.c_size_t(self.size))
            d.cuMemAddressFree(ctypes.c_uint64(self.ptr), ctypes.c_size_t(self.size))
            d.cuMemRelease(ctypes.c_uint64(self.handle))
            self.ptr = 0


class _Raw:
    def __init__(self, ptr: int, nbytes: int):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False), "version": 3,
                                         "strides": None, "stream": None}


def tensor_at(ptr: int, nbytes: int):
    """A uint8 CUDA tensor over device memory this process maps (no copy, no ownership)."""
    import torch
    if nbytes == 0:
        return torch.empty(0, dtype=torch.uint8, device="cuda")
    return torch.as_tensor(_Raw(ptr, nbytes), device="cuda")


def page_of(ptr: int) -> tuple[int, int] | None:
    """(base, size) of the mapped allocation that holds ptr, or None."""
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    if driver().cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(ptr)) != 0:
        return None
    return base.value, size.value


def export_page(ptr: int) -> int | None:
    """A descriptor for the shareable allocation mapped at ptr, or None when ptr's memory is not one
    (plain cudaMalloc memory, or a handle type other than a descriptor)."""
    d = driver()
    handle = ctypes.c_uint64()
    if d.cuMemRetainAllocationHandle(ctypes.byref(handle), ctypes.c_void_p(ptr)) != 0:
        return None
    try:
        fd = ctypes.c_int(-1)
        if d.cuMemExportToShareableHandle(ctypes.byref(fd), handle, ctypes.c_int(_POSIX_FD), ctypes.c_ulonglong(0)):
            return None
        return fd.value
    finally:
        d.cuMemRelease(handle)
