#!/usr/bin/env python3
"""How long the disk under a directory takes to make a small write durable (bench/delivery).

Every push the intake accepts is a durable commit: Postgres writes its WAL and waits for
fdatasync before the 202. This writes 8 KiB and calls fdatasync in a loop for --seconds on a
file in --dir (the benchmark's Postgres data directory, so the same filesystem and device) and
prints p50/p99/max in microseconds, the floor under the intake's answer time. Standard library only.
"""
import argparse
import os
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--seconds", type=float, default=3.0)
    args = p.parse_args()
    path = os.path.join(args.dir, "herald-bench-fsync.tmp")
    block = b"\0" * 8192
    samples = []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        end = time.monotonic() + args.seconds
        offset = 0
        while time.monotonic() < end:
            os.pwrite(fd, block, offset)
            start = time.perf_counter_ns()
            os.fdatasync(fd)
            samples.append((time.perf_counter_ns() - start) / 1000)
            # Appending, as WAL does, within 16 MiB (a WAL segment), then over again.
            offset = (offset + len(block)) % (16 << 20)
    finally:
        os.close(fd)
        os.unlink(path)
    samples.sort()
    pick = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
    print("fdatasync of 8 KiB: %d samples in %.0f s, p50 %.0f us, p99 %.0f us, max %.0f us"
          % (len(samples), args.seconds, pick(0.5), pick(0.99), samples[-1]))


if __name__ == "__main__":
    main()
