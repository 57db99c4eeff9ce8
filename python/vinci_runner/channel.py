"""The wire between a trusted process and a sandboxed one: JSON lines, descriptors, shared memory.

The wire between a trusted process and a sandboxed one: JSON lines over a Unix socket, file
descriptors passed beside a line (a built library, a GPU allocation), and a shared-memory buffer
for tensors.

Both sides import this file, so it must stay free of policy: the trusted side treats everything
that arrives as a claim to check, never as a verdict.
"""
from __future__ import annotations

import array
import json
import math
import mmap
import os
import select
import socket
import time

MAX_LINE = 1 << 20  # a runner's message; tensors travel through the buffer, never in a line
MAX_FDS = 4096  # descriptors one message may carry (a GPU output's pages); more end the channel
# How deep a message's lists and objects may nest: the protocol's messages nest a few levels, and the
# trusted side must never recurse as deep as the other side chooses (red-team round 46 sent 50,000
# levels, and json.loads's RecursionError, not a ValueError, ended the judge).
MAX_DEPTH = 32
FDS_PER_SEND = 250  # the kernel passes at most 253 (SCM_MAX_FD) with one piece of data
ALIGN = 64


def too_deep(line: bytes) -> bool:
    """Whether a JSON line's brackets and braces nest deeper than MAX_DEPTH outside its strings: checked
    before the line is parsed, so that no parser recurses on it."""
    if line.count(b"[") + line.count(b"{") <= MAX_DEPTH:  # the usual message, counted in C
        return False
    depth = 0
    in_string = escaped = False
    for byte in line:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return False


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
        self.fds: list[int] = []  # descriptors received and not yet taken by a message

    @classmethod
    def from_fd(cls, fd: int) -> "Channel":
        return cls(socket.socket(fileno=fd))

    def send(self, message: dict, fds: list[int] = ()) -> None:
        """Sends one line; the line says how many descriptors travel with it ("fds"), at most
        FDS_PER_SEND with each of its first bytes, so all have arrived when its end has."""
        fds = list(fds)
        if fds:
            message = {**message, "fds": len(fds)}
        data = json.dumps(finite(message), default=str, allow_nan=False).encode() + b"\n"
        try:
            at = 0
            while fds:
                batch, fds = fds[:FDS_PER_SEND], fds[FDS_PER_SEND:]
                piece = data[at:at + 1] if fds else data[at:]  # one byte per batch, the rest with the last
                sent = self.sock.sendmsg([piece], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", batch))])
                at += sent
            self.sock.sendall(data[at:])
        except OSError as e:
            raise ChannelClosed(f"send failed: {e}") from None

    def receive(self, timeout: float | None = None) -> dict:
        """The next message; timeout None waits for ever. A message that says it carries n
        descriptors ("fds": n) takes them, in order, as message["fds"] (a list the caller owns and
        must close); descriptors no message announces pile up to MAX_FDS, then end the channel."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buffer:
            if len(self.buffer) > MAX_LINE:
                raise ProtocolError(f"a message longer than {MAX_LINE} bytes")
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                    raise ChannelTimeout()
            try:
                chunk, ancillary, flags, _ = self.sock.recvmsg(65536, socket.CMSG_SPACE(256 * 4))
            except OSError as e:
                raise ChannelClosed(f"receive failed: {e}") from None
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    got = array.array("i")
                    got.frombytes(payload[:len(payload) - len(payload) % got.itemsize])
                    self.fds.extend(got)
            if len(self.fds) > MAX_FDS or flags & socket.MSG_CTRUNC:
                self._close_fds(len(self.fds))
                raise ProtocolError(f"more than {MAX_FDS} descriptors, or truncated ones")
            if not chunk:
                raise ChannelClosed("the other side closed the channel")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        if too_deep(line):
            self._close_fds(len(self.fds))
            raise ProtocolError(f"a message nested deeper than {MAX_DEPTH} levels: {line[:120]!r}")
        try:
            message = json.loads(line)
        except Exception:  # whatever the bytes make the parser raise is the sender's fault, never ours
            self._close_fds(len(self.fds))
            raise ProtocolError(f"not JSON: {line[:120]!r}") from None
        if not isinstance(message, dict):
            self._close_fds(len(self.fds))
            raise ProtocolError(f"not a JSON object: {line[:120]!r}")
        wanted = message.get("fds", 0)
        if not isinstance(wanted, int) or isinstance(wanted, bool) or not 0 <= wanted <= len(self.fds):
            self._close_fds(len(self.fds))
            raise ProtocolError(f"a message announcing {wanted!r} descriptors, {len(self.fds)} received")
        message["fds"], self.fds = self.fds[:wanted], self.fds[wanted:]
        return message

    def _close_fds(self, n: int) -> None:
        for fd in self.fds[:n]:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = self.fds[n:]

    def close(self) -> None:
        self._close_fds(len(self.fds))
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
    """A memfd both sides map: a CPU call's inputs, which the judge writes and the runner's tensors
    view (and its outputs, where a host will not let the judge read the runner's memory)."""

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
        self.unmap()
        os.ftruncate(self.fd, size)
        self.size = size
        self.map = mmap.mmap(self.fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)

    def unmap(self) -> None:
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
