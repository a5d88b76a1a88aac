"""Writes a Kafka segment of magic-2 batches of PER_BATCH uncompressed 1 KiB records (random
bytes, null keys), up to SIZE bytes, for benchmarks/rebuild-index.sh:

    python3 make_segment.py OUT.log PER_BATCH SIZE

One batch is built (CRC-32C included) and repeated with patched base offsets: the CRC does not
cover the base offset, so every copy is valid. All records share one timestamp.
"""
import struct, sys, os

def crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t
T = crc32c_table()
def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF

def varint(v):
    v = (v << 1) ^ (v >> 63)
    out = bytearray()
    while v & ~0x7F:
        out.append((v & 0x7F) | 0x80); v >>= 7
    out.append(v)
    return bytes(out)

def record(i, value):
    body = bytes([0]) + varint(0) + varint(i) + varint(-1) + varint(len(value)) + value + varint(0)
    return varint(len(body)) + body

def batch(n, ts):
    recs = b''.join(record(i, os.urandom(1024)) for i in range(n))
    after_crc = struct.pack('>hiqqqhii', 0, n - 1, ts, ts, -1, -1, -1, n) + recs
    crc = crc32c(after_crc)
    batch_length = 4 + 1 + 4 + len(after_crc)
    return struct.pack('>qiib', 0, batch_length, 0, 2) + struct.pack('>I', crc) + after_crc

out, per_batch, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tpl = batch(per_batch, 1767225600000)
with open(out, 'wb') as f:
    off = 0
    buf = bytearray()
    written = 0
    while written + len(tpl) <= size:
        buf += struct.pack('>q', off) + tpl[8:]
        off += per_batch
        written += len(tpl)
        if len(buf) > (8 << 20):
            f.write(buf); buf = bytearray()
    f.write(buf)
print(out, written, off)
