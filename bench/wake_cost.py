#!/usr/bin/env python3
"""What it costs the machine to wake a sleeping process (bench/delivery).

A single push passes between processes and threads some thirty times (the load generator, the intake's
threads, Postgres' sessions, the workers' threads, the simulator), each waking one that slept. This
measures one such hand-over: two processes pass a byte back and forth over two pipes for --seconds, first
free to run on any CPU, then both pinned to the first CPU, and prints the CPU time (user and system, both
processes) and the wall time of one hand-over. On a virtual machine a wake-up on an idle CPU costs a
halt and an interrupt through the hypervisor, which the pinned run does not pay. Standard library only.
"""
import argparse
import os
import resource
import time


def measure(seconds, pin):
    parent_read, child_write = os.pipe()
    child_read, parent_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        if pin:
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        os.close(parent_read)
        os.close(parent_write)
        while True:
            byte = os.read(child_read, 1)
            if not byte:
                os._exit(0)
            os.write(child_write, byte)
    os.close(child_read)
    os.close(child_write)
    allowed = os.sched_getaffinity(0)
    if pin:
        os.sched_setaffinity(0, {min(allowed)})
    before_self = resource.getrusage(resource.RUSAGE_SELF)
    start = time.monotonic()
    trips = 0
    while time.monotonic() - start < seconds:
        for _ in range(100):
            os.write(parent_write, b"x")
            os.read(parent_read, 1)
        trips += 100
    wall = time.monotonic() - start
    os.close(parent_write)
    _, _, child_usage = os.wait4(pid, 0)
    os.close(parent_read)
    after_self = resource.getrusage(resource.RUSAGE_SELF)
    if pin:
        os.sched_setaffinity(0, allowed)
    cpu = (after_self.ru_utime - before_self.ru_utime + after_self.ru_stime - before_self.ru_stime
           + child_usage.ru_utime + child_usage.ru_stime)
    # Two hand-overs a round trip.
    return cpu * 1e6 / trips / 2, wall * 1e6 / trips / 2


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=2.0)
    args = p.parse_args()
    free_cpu, free_wall = measure(args.seconds, pin=False)
    pinned_cpu, pinned_wall = measure(args.seconds, pin=True)
    print(f"a hand-over between two processes: {free_cpu:.1f} µs of CPU ({free_wall:.1f} µs) on any CPU, "
          f"{pinned_cpu:.1f} µs ({pinned_wall:.1f} µs) both on one CPU")


if __name__ == "__main__":
    main()
