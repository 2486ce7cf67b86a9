#!/usr/bin/env python3
"""Spoils OpenCL blobs in a compiled-piece cache directory, one way each, and
keeps the host's wrapper valid where the provider is the one to refuse.

    spoil_blobs.py CACHE_DIR

A file NAME.tsrpiece is the host's wrapper (core/piece_cache.c):
"TSRPIECE", u32 format, u32 compat length, the compat string, a 16-byte
key, u64 blob length, the blob, u64 checksum of the blob. The blob inside
is the OpenCL provider's (providers/opencl/ocl_blob.c): "TSROCLPC", u32
format, u32 program count, u64 compat hash, u64 plan, per program u64 key,
u64 size and the binary, then a u64 checksum of all before it.

Each spoiled file gets one of these, and the line "KIND FILE" is printed:
  host_damaged    a byte of a binary flipped, host checksum left: the
                  host refuses the file itself
  damaged         the same with the host checksum redone: the provider's
                  own checksum refuses it
  cut             the blob cut inside its last binary, both checksums
                  redone: the provider's length checks refuse it
  foreign         another piece's blob (other programs) under this
                  piece's name, host checksum redone: the rebuilt piece
                  asks for programs the blob does not hold
  bad_binary      the first bytes of a binary replaced, both checksums
                  redone: a well-formed blob the driver must refuse
Needs five files holding at least one program, two of them holding
programs no other file holds (for bad_binary and foreign); exits 1
otherwise.
"""
import os
import struct
import sys

M64 = (1 << 64) - 1


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def host_hash(data):
    """core/piece_cache.c blob_hash."""
    p1, p2, p3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
    a, b = 0x452821E638D01377, 0xBE5466CF34E90C6C

    def mix(w):
        nonlocal a, b
        a = (rotl(a ^ ((w * p2) & M64), 31) * p1) & M64
        b = (rotl((b + ((w * p3) & M64)) & M64, 27) * p2 + p1) & M64

    n = len(data)
    mix(n)
    whole = n - n % 8
    for (w,) in struct.iter_unpack("<Q", data[:whole]):
        mix(w)
    mix(int.from_bytes(data[whole:], "little"))
    return a ^ rotl(b, 17)


def ocl_checksum(data):
    """providers/opencl/ocl_blob.c checksum."""
    n = len(data)
    h = 0x9E3779B97F4A7C15 ^ n
    whole = n - n % 8
    for (w,) in struct.iter_unpack("<Q", data[:whole]):
        h = ((h ^ w) * 0xFF51AFD7ED558CCD) & M64
        h ^= h >> 32
    h = ((h ^ int.from_bytes(data[whole:], "little")) * 0xC4CEB9FE1A85EC53) & M64
    return h ^ (h >> 29)


def read_host(path):
    """(prefix through the key, blob)."""
    f = open(path, "rb").read()
    assert f[:8] == b"TSRPIECE", path
    clen = struct.unpack_from("<I", f, 12)[0]
    at = 16 + clen + 16
    (n,) = struct.unpack_from("<Q", f, at)
    return f[:at], f[at + 8:at + 8 + n]


def write_host(path, prefix, blob):
    with open(path, "wb") as out:
        out.write(prefix + struct.pack("<Q", len(blob)) + blob + struct.pack("<Q", host_hash(blob)))


def programs(blob):
    """[(key, offset of the binary, size)]."""
    assert blob[:8] == b"TSROCLPC"
    (count,) = struct.unpack_from("<I", blob, 12)
    at, out = 32, []
    for _ in range(count):
        key, size = struct.unpack_from("<QQ", blob, at)
        out.append((key, at + 16, size))
        at += 16 + size
    return out


def reseal(body):
    """The provider's blob with its trailing checksum redone."""
    return body + struct.pack("<Q", ocl_checksum(body))


def main(cache):
    files = sorted(os.path.join(cache, f) for f in os.listdir(cache)
                   if f.startswith("opencl-") and f.endswith(".tsrpiece"))
    with_programs = [(f,) + read_host(f) for f in files]
    with_programs = [t for t in with_programs if programs(t[2])]
    if len(with_programs) < 5:
        sys.exit("spoil_blobs.py: %d blobs with programs in %s, 5 needed" % (len(with_programs), cache))
    keys = lambda blob: {k for k, _, _ in programs(blob)}
    # A program an earlier piece of the session already made is not made
    # again from a blob: the driver sees a bad binary, and a piece misses a
    # program its foreign blob lacks, only where no other blob holds them.
    unique = [t for t in with_programs
              if not any(keys(t[2]) & keys(u[2]) for u in with_programs if u is not t)]
    if len(unique) < 2:
        sys.exit("spoil_blobs.py: %d blobs hold programs of their own, 2 needed" % len(unique))
    bad, target = unique[0], unique[1]
    # foreign: the target gets a blob with none of its programs
    source = next(t for t in with_programs if t is not target)
    rest = [t for t in with_programs if t is not bad and t is not target]

    path, prefix, blob = target
    write_host(path, prefix, source[2])
    print("foreign", os.path.basename(path))

    def flipped(blob):
        _, off, size = programs(blob)[0]
        b = bytearray(blob)
        b[off + size // 2] ^= 0x5A
        return bytes(b)

    path, prefix, blob = rest[0]
    spoiled = flipped(blob)
    with open(path, "wb") as out:  # the host's checksum still of the good blob
        out.write(prefix + struct.pack("<Q", len(spoiled)) + spoiled + struct.pack("<Q", host_hash(blob)))
    print("host_damaged", os.path.basename(path))

    path, prefix, blob = rest[1]
    write_host(path, prefix, flipped(blob))
    print("damaged", os.path.basename(path))

    path, prefix, blob = rest[2]
    _, off, size = programs(blob)[-1]
    write_host(path, prefix, reseal(blob[:off + size // 2]))
    print("cut", os.path.basename(path))

    path, prefix, blob = bad
    _, off, size = programs(blob)[0]
    b = bytearray(blob[:-8])
    b[off:off + min(size, 64)] = b"\xAB" * min(size, 64)
    write_host(path, prefix, reseal(bytes(b)))
    print("bad_binary", os.path.basename(path))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: spoil_blobs.py CACHE_DIR")
    main(sys.argv[1])
