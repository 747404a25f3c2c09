#!/usr/bin/env python3
"""A Git delta bomb for the pack-bomb test (issue 21 H5): a pack of a few KB whose deltas unpack
to gigabytes, written with its index straight into a repository's object store, so that
`git http-backend` serves it as it is (upload-pack reuses stored deltas without unpacking them).
Used by tests/integration/git.rs; not part of the product.

    git_delta_bomb.py OBJECTS_DIR COUNT RESULT_MIB [chain]

Writes pack-<sha>.{pack,idx} under OBJECTS_DIR/pack: one blob of 1 MiB of zeros and COUNT
blobs, each an offset delta against it of 2-byte copy instructions that unpacks to RESULT_MIB
MiB of zeros and one byte of its own. With `chain`, each of the COUNT blobs is a delta against
the one before instead (a chain of COUNT levels of RESULT_MIB MiB), and each level has a small
leaf blob besides, a delta against it: while the chain is resolved, every level stays in memory
for its leaf. Prints the blob ids, the base first, a line each. Nothing is ever unpacked here:
the ids are hashed from a stream of zeros.
"""
import hashlib, os, struct, sys, zlib

objects, count, result_mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
MIB = 1 << 20
BASE = MIB


def blob_id(size):
    h = hashlib.sha1(b"blob %d\0" % size)
    chunk = bytes(MIB)
    left = size
    while left:
        n = min(left, MIB)
        h.update(chunk[:n])
        left -= n
    return h.digest()


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def entry_header(kind, size):
    b = (kind << 4) | (size & 0x0F)
    size >>= 4
    out = bytearray()
    while size:
        out.append(b | 0x80)
        b = size & 0x7F
        size >>= 7
    out.append(b)
    return bytes(out)


def ofs(distance):
    out = [distance & 0x7F]
    distance >>= 7
    while distance:
        distance -= 1
        out.insert(0, 0x80 | (distance & 0x7F))
        distance >>= 7
    return bytes(out)


chain = len(sys.argv) > 4 and sys.argv[4] == "chain"
base_raw = entry_header(3, BASE) + zlib.compress(bytes(BASE), 9)
body = bytearray(b"PACK" + struct.pack(">II", 2, count * (2 if chain else 1) + 1))
index = {blob_id(BASE): (base_raw, len(body))}
body += base_raw
result = result_mib * MIB
ids = []
parent_offset, parent_size = 12, BASE


def add(delta, tail):
    """Append an offset delta against the parent; `tail` is what it appends to the zeros."""
    start = len(body)
    raw = entry_header(6, len(delta)) + ofs(start - parent_offset) + zlib.compress(delta, 9)
    return start, raw


def zeros_id(zeros, tail):
    h = hashlib.sha1(b"blob %d\0" % (zeros + len(tail)))
    chunk = bytes(MIB)
    left = zeros
    while left:
        n = min(left, MIB)
        h.update(chunk[:n])
        left -= n
    h.update(tail)
    return h.digest()


for i in range(count):
    # Copy 1 MiB from offset 0 of the parent (0x80 | 0x40: one size byte, the third: 0x10),
    # then insert the bytes that make each blob a different one.
    tail = struct.pack(">I", i)
    delta = varint(parent_size) + varint(result + len(tail)) + b"\xc0\x10" * result_mib
    delta += bytes([len(tail)]) + tail
    start, raw = add(delta, tail)
    oid = zeros_id(result, tail)
    index[oid] = (raw, start)
    ids.append(oid)
    body += raw
    if chain:
        this_offset, this_size = start, result + len(tail)
        # The leaf: 8 bytes of its own, a delta against this level.
        parent_offset, parent_size = this_offset, this_size
        leaf_tail = b"leaf" + tail
        leaf = varint(this_size) + varint(len(leaf_tail)) + bytes([len(leaf_tail)]) + leaf_tail
        start, raw = add(leaf, leaf_tail)
        oid = zeros_id(0, leaf_tail)
        index[oid] = (raw, start)
        ids.append(oid)
        body += raw
pack_sha = hashlib.sha1(body).digest()
body += pack_sha

idx = bytearray(b"\xfftOc" + struct.pack(">I", 2))
fanout = [0] * 256
for oid in index:
    fanout[oid[0]] += 1
total = 0
for i in range(256):
    total += fanout[i]
    idx += struct.pack(">I", total)
ordered = sorted(index)
for oid in ordered:
    idx += oid
for oid in ordered:
    idx += struct.pack(">I", zlib.crc32(index[oid][0]) & 0xFFFFFFFF)
for oid in ordered:
    idx += struct.pack(">I", index[oid][1])
idx += pack_sha
idx += hashlib.sha1(idx).digest()

os.makedirs(os.path.join(objects, "pack"), exist_ok=True)
name = os.path.join(objects, "pack", "pack-" + pack_sha.hex())
with open(name + ".pack", "wb") as f:
    f.write(body)
with open(name + ".idx", "wb") as f:
    f.write(idx)
print(blob_id(BASE).hex())
for oid in ids:
    print(oid.hex())
