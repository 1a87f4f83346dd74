"""Compression bombs, built without ever holding what they decode to, and a way to count
what one decodes to without holding it either.

The deflate stream is written by hand, as one block with its own Huffman codes: four
literal zeros, then matches of 258 bytes at distance 4, each coded in two bits that are
both 0. So 2 GiB of zeros deflate to about 2 MB of zero bytes, which gzip packs into about
2 KB. (Distance 4 rather than 1: as compact, and zlib inflates it four times faster, which
keeps counting 2 GiB quick.) Only the gzip trailer's CRC needs every byte; zlib computes
it a MiB at a time.
"""

from __future__ import annotations

import gzip
import struct
import zlib

MIB = 1024 * 1024
GIB = 1024 * MIB
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # deflate, no name, no time
_MAX_MATCH = 258
_SLICE = 4096
_DISTANCE = 4  # the farthest a match may reach with a distance code of no extra bits
# The order in which a dynamic block lists the code lengths of its code-length alphabet.
_CODE_LENGTH_ORDER = (16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1)
# The code-length alphabet: lengths 1 and 2, a short run of none (17), a long one (18),
# each coded in two bits.
_CL = {1: "00", 2: "01", 17: "10", 18: "11"}
# Literal/length codes: literal 0 "10", end of block "11", length 258 (code 285) "0".
# Distance codes 0-3 (distances 1-4): only code 3, "0".
_CODE_LENGTHS = (
    (2, 0),  # literal 0: 2 bits
    (18, 138),  # literals 1-138: none
    (18, 117),  # literals 139-255: none
    (2, 0),  # end of block: 2 bits
    (18, 28),  # lengths 257-284: none
    (1, 0),  # length 258: 1 bit
    (17, 3),  # distances 1-3: none
    (1, 0),  # distance 4: 1 bit
)
_LITERAL_ZERO, _END = "10", "11"


def deflate_of_zeros(size: int) -> bytes:
    """A raw deflate stream of `size` zero bytes, about size / 1032 long."""
    assert size >= _DISTANCE
    bits: list[int] = []

    def number(value: int, width: int) -> None:  # header fields, extra bits: low bit first
        bits.extend((value >> i) & 1 for i in range(width))

    def code(text: str) -> None:  # Huffman codes: first bit first
        bits.extend(int(bit) for bit in text)

    number(1, 1)  # the final block
    number(2, 2)  # with its own Huffman codes
    number(286 - 257, 5)  # literal/length codes 0-285
    number(_DISTANCE - 1, 5)  # distance codes 0-3
    number(len(_CODE_LENGTH_ORDER) - 4, 4)
    for symbol in _CODE_LENGTH_ORDER:
        number(2 if symbol in _CL else 0, 3)
    for symbol, run in _CODE_LENGTHS:
        code(_CL[symbol])
        if symbol == 18:
            number(run - 11, 7)
        elif symbol == 17:
            number(run - 3, 3)
    code(_LITERAL_ZERO * _DISTANCE)
    matches, rest = divmod(size - _DISTANCE, _MAX_MATCH)
    start_of_tail = len(bits) + 2 * matches  # each match: "0" (length) and "0" (distance)
    tail = [int(bit) for bit in _LITERAL_ZERO * rest + _END]
    packed = bytearray((start_of_tail + len(tail) + 7) // 8)
    for at, bit in [*enumerate(bits), *enumerate(tail, start=start_of_tail)]:
        packed[at >> 3] |= bit << (at & 7)
    return bytes(packed)


def gzip_of_zeros(size: int) -> bytes:
    """A gzip stream of `size` zero bytes: 2 GiB come to about 2 MB."""
    crc, zeros = 0, bytes(MIB)
    for start in range(0, size, MIB):
        crc = zlib.crc32(zeros[: min(MIB, size - start)], crc)
    return _GZIP_HEADER + deflate_of_zeros(size) + struct.pack("<II", crc, size & 0xFFFFFFFF)


def gzip_gzip_of_zeros(size: int) -> bytes:
    """`size` zero bytes gzipped twice: 2 GiB come to about 2 KB."""
    return gzip.compress(gzip_of_zeros(size), compresslevel=9, mtime=0)


def decoded_size(body: bytes, layers: int) -> int:
    """How many bytes `body`, gzipped `layers` times, decodes to, a MiB at a time."""
    streams = [zlib.decompressobj(16 + zlib.MAX_WBITS) for _ in range(layers)]

    def through(level: int, data: bytes) -> int:
        if level == layers:
            return len(data)
        stream, total = streams[level], 0
        # A little input at a time: zlib copies what it has not used on every call.
        for start in range(0, max(len(data), 1), _SLICE):
            rest = data[start : start + _SLICE]
            while True:
                piece = stream.decompress(rest, MIB)
                rest = stream.unconsumed_tail
                total += through(level + 1, piece)
                if not rest and len(piece) < MIB:  # nothing left in, nothing held back
                    break
        return total

    total = through(0, body)
    assert all(stream.eof for stream in streams), "a whole stream at every layer"
    return total
