"""The wire between a trusted process and a sandboxed one: JSON lines over a Unix socket, and a
shared-memory buffer for tensors.

Both sides import this file, so it must stay free of policy: the trusted side treats everything
that arrives as a claim to check, never as a verdict.
"""
from __future__ import annotations

import json
import math
import mmap
import os
import select
import socket
import time

MAX_LINE = 1 << 20  # a runner's message; tensors travel through the buffer, never in a line
ALIGN = 64


class ChannelClosed(Exception):
    """The other side closed the socket or died."""


class ChannelTimeout(Exception):
    """No message arrived before the deadline."""


class ProtocolError(Exception):
    """The other side sent something that is not a message of the protocol."""


def finite(obj):
    """JSON has no NaN or Infinity: non-finite numbers travel as null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


class Channel:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buffer = b""

    @classmethod
    def from_fd(cls, fd: int) -> "Channel":
        return cls(socket.socket(fileno=fd))

    def send(self, message: dict) -> None:
        data = json.dumps(finite(message), default=str, allow_nan=False).encode() + b"\n"
        try:
            self.sock.sendall(data)
        except OSError as e:
            raise ChannelClosed(f"send failed: {e}") from None

    def receive(self, timeout: float | None = None) -> dict:
        """The next message; timeout None waits for ever."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buffer:
            if len(self.buffer) > MAX_LINE:
                raise ProtocolError(f"a message longer than {MAX_LINE} bytes")
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                    raise ChannelTimeout()
            try:
                chunk = self.sock.recv(65536)
            except OSError as e:
                raise ChannelClosed(f"receive failed: {e}") from None
            if not chunk:
                raise ChannelClosed("the other side closed the channel")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            raise ProtocolError(f"not JSON: {line[:120]!r}") from None
        if not isinstance(message, dict):
            raise ProtocolError(f"not a JSON object: {line[:120]!r}")
        return message

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def layout(specs: list[dict]) -> tuple[list[int], int]:
    """Byte offsets of each tensor spec in the shared buffer, and the buffer's size."""
    offsets, size = [], 0
    for s in specs:
        offsets.append(size)
        if s["kind"] == "tensor":
            size += (s["nbytes"] + ALIGN - 1) // ALIGN * ALIGN
    return offsets, max(size, ALIGN)


class SharedBuffer:
    """A memfd both sides map: the runner writes delivered outputs, the trusted side copies them out."""

    def __init__(self, fd: int, size: int | None = None):
        self.fd = fd
        if size is not None:
            os.ftruncate(fd, size)
        self.size = os.fstat(fd).st_size
        self.map = mmap.mmap(fd, self.size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)

    @classmethod
    def create(cls, size: int) -> "SharedBuffer":
        return cls(os.memfd_create("vinci-outputs", 0), size)

    def resize(self, size: int) -> None:
        """Grows or shrinks the buffer; a process that maps it afterwards sees the new size."""
        pinned = self._pinned is not None
        self.unmap()
        os.ftruncate(self.fd, size)
        self.size = size
        self.map = mmap.mmap(self.fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        if pinned:
            self.pin()

    _pinned = None  # the whole mapping as a tensor, while it is registered with CUDA

    def pin(self) -> str:
        """Page-locks the mapping for CUDA (cudaHostRegister), so copies between it and a GPU run by
        DMA instead of through the driver's pageable staging: a task's outputs of a few GB move in a
        tenth of the time. Kept across resize. Returns why not where CUDA refuses (the copies still
        work, slower), else ''."""
        import torch  # the judge's launcher imports this module before torch is needed
        if self._pinned is not None:
            return ""
        whole = torch.frombuffer(self.map, dtype=torch.uint8)
        code = int(torch.cuda.cudart().cudaHostRegister(whole.data_ptr(), self.size, 0))
        if code != 0:
            _clear_cuda_error()
            return f"cudaHostRegister of {self.size} bytes failed with cudaError {code}"
        self._pinned = whole
        return ""

    def unmap(self) -> None:
        if self._pinned is not None:
            import torch
            torch.cuda.cudart().cudaHostUnregister(self._pinned.data_ptr())
            self._pinned = None
        try:
            self.map.close()
        except (ValueError, BufferError):
            pass

    def close(self) -> None:
        self.unmap()
        try:
            os.close(self.fd)
        except OSError:
            pass


def _clear_cuda_error() -> None:
    """Takes a failed call's error off the CUDA runtime, which would otherwise raise at torch's next
    launch check although nothing is wrong with the context."""
    import ctypes
    import torch
    try:
        ctypes.CDLL(f"libcudart.so.{torch.version.cuda.split('.')[0]}").cudaGetLastError()
    except (OSError, AttributeError):
        pass
