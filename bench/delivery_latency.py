#!/usr/bin/env python3
"""Latency from intake acceptance to simulator receipt, at a steady push rate (bench/delivery).

Sends single-recipient pushes to herald-intake at --rate per second for --seconds on a fixed
schedule, open loop (one asyncio event loop over a pool of keep-alive connections that grows when
every connection is waiting for an answer: a slow answer neither lowers the offered rate nor
delays the next push, and the client's own CPU stays small beside the processes measured), up to
--max-connections, the intake's limit: past it a push waits for a connection to come back and is
reported as sent that much behind its slot. (Without the cap, an intake slower than the offered rate
met ever more connections, which queued in its accept backlog past its limit while the client's one
thread, thousands of sockets deep, fell seconds behind and left the intake idle.) As any
HTTP/1.1 client should, it never sends again on a connection answered with `Connection: close`, nor
on one idle past the answer's `Keep-Alive: timeout`). Pushes not accepted are counted by status
(503 `too_many_connections` past the intake's connections per address) and apart, those that got
no answer at all (a reset, an empty answer, a connect timeout). Waits
for the outbox to drain, then joins what the simulator received (GET /sim/received through curl:
apns-id, or the deliveryId in an FCM message, and the receipt time) with each delivery's request in
Postgres (push_requests.created_at, the moment of acceptance). Both times are to the microsecond:
created_at is the request id's time (HeraldCore UUIDv7 keeps the millisecond's fraction) and the
simulator writes receivedAt with microseconds.
Prints p50/p90/p99/max and the achieved rate. The first --warmup seconds run at the same rate and are
not counted: the statements' plans are rebuilt after the ANALYZE and CHECKPOINT the caller runs before
each rate, and every connection's caches start cold.
Standard library only.
"""
import argparse
import asyncio
import collections
import json
import shlex
import socket
import subprocess
import sys
import time
import urllib.parse
from datetime import datetime


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--intake", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--users", type=int, required=True)
    p.add_argument("--rate", type=int, default=1000)
    p.add_argument("--seconds", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3, help="seconds sent first at the same rate and not counted")
    p.add_argument("--sim", required=True)
    p.add_argument("--ca", required=True)
    p.add_argument("--psql", required=True, help="psql command line (connection options included)")
    p.add_argument("--connections", type=int, default=32,
                   help="keep-alive connections opened first (more are opened while all are busy)")
    p.add_argument("--max-connections", type=int, default=1024,
                   help="connections open at most (the intake's limit a client address, as bench/delivery sets it)")
    p.add_argument("--lane", type=int, default=None,
                   help="only this lane's deliveries: wait for it to drain and measure it (bench/backfill: 0 while "
                        "a backfill drains in lane 1)")
    return p.parse_args()


class Load:
    """The open-loop sender's record: answers by whether they were counted, and the connections it needed."""

    def __init__(self):
        self.ok = 0
        self.other = 0
        self.why_not = collections.Counter()  # why the others were not accepted: "status 503", "ConnectionResetError"
        self.not_answered = 0  # of the others, those that got no HTTP answer at all (a reset, a close, a timeout)
        self.response_ms = []  # (ms, deliveries) of counted answers; 0 deliveries for a refusal
        self.opened = 0  # connections at the end (--connections, and those opened while all were busy)
        self.late_ms = 0.0  # the most a send started after its slot (the client's own lag, a wait for a connection)


async def open_connection(url):
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return reader, writer


class Pool:
    """Keep-alive connections, at most `limit` open: a push that finds none idle opens one, or past the limit
    waits for one, first come, first served (a connection given back goes to the longest waiter; a closed one's
    place, to the longest waiter, which opens a new one)."""

    def __init__(self, url, limit):
        self.url = url
        self.limit = limit
        self.idle = collections.deque()
        self.open = 0
        self.waiters = collections.deque()
        # The intake's last Keep-Alive timeout: it holds for a connection opened before any answer too (at a low
        # rate one of the first connections waits longer than the intake's idle timeout for its first push).
        self.keep_alive = None

    async def take(self):
        """An idle connection the intake still keeps open (it said how long with Keep-Alive: timeout; the
        longest idle first, so none reaches the intake's idle timeout), a new one, or one given back."""
        now = time.monotonic()
        while self.idle:
            reader, writer, idle_since, keep_alive = self.idle.popleft()
            keep_alive = keep_alive if keep_alive is not None else self.keep_alive
            if keep_alive is None or now - idle_since < keep_alive:
                return reader, writer
            self.closed(writer)
        if self.open < self.limit:
            self.open += 1
        else:
            waiter = asyncio.get_running_loop().create_future()
            self.waiters.append(waiter)
            given = await waiter
            if given is not None:
                return given
        # A place of its own (self.open counts it): a new connection.
        try:
            return await open_connection(self.url)
        except OSError:
            self.open -= 1
            self.hand_place()
            raise

    def give_back(self, reader, writer, keep_alive):
        if keep_alive is not None:
            self.keep_alive = keep_alive
        if self.waiters:
            self.waiters.popleft().set_result((reader, writer))
        else:
            self.idle.append((reader, writer, time.monotonic(), keep_alive))

    def closed(self, writer):
        writer.close()
        self.open -= 1
        self.hand_place()

    def hand_place(self):
        """A place freed: the longest waiter opens a connection in it."""
        if self.waiters and self.open < self.limit:
            self.open += 1
            self.waiters.popleft().set_result(None)


async def send_one(args, pool, load, n, slot, measure_from):
    """One push on an idle keep-alive connection (a new one when every connection is busy: the schedule
    does not wait for answers, so a slow intake meets more connections, not a lower offered rate, up to
    the pool's limit)."""
    try:
        reader, writer = await pool.take()
    except OSError as error:
        if time.time() >= measure_from:
            load.other += 1
            load.not_answered += 1
            load.why_not[type(error).__name__ + " (connecting)"] += 1
        return
    user = n % args.users + 1
    body = json.dumps({"recipients": {"emails": [f"user{user}@bench.example"]},
                       "title": "Deposit pending", "body": "Confirmations: 1/6",
                       "data": {"txHash": "0x%064x" % n}}).encode()
    request = (f"POST /api/partners/notifications/push HTTP/1.1\r\nHost: {pool.url.hostname}\r\n"
               f"Authorization: Bearer {args.key}\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    # By when it is sent, as the deliveries are picked by their request's created_at.
    sent_at = time.time()
    load.late_ms = max(load.late_ms, (sent_at - slot) * 1000)
    counted = sent_at >= measure_from
    try:
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        closes = False
        keep_alive = None
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection":
                closes = b"close" in value.lower()
            elif name == b"keep-alive":
                for option in value.split(b","):
                    key, _, seconds = option.strip().partition(b"=")
                    if key.lower() == b"timeout" and seconds.isdigit():
                        keep_alive = int(seconds)
        answer = await reader.readexactly(length)
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError) as error:
        load.other += counted
        load.not_answered += counted
        load.why_not[type(error).__name__] += counted
        pool.closed(writer)
        return
    elapsed_ms = (time.time() - sent_at) * 1000
    if closes:
        # The intake closes it after this answer (a refusal, or a stop): never send on it again.
        pool.closed(writer)
    else:
        pool.give_back(reader, writer, keep_alive)
    if not counted:
        return
    if status == 202:
        load.ok += 1
        # One device or more: the intake writes a one-device push in its group commit and takes
        # two more round trips for more (Sources/Store/IntakeWriter.swift), so each is reported apart.
        load.response_ms.append((elapsed_ms, json.loads(answer).get("deliveries", 0)))
    else:
        load.other += 1
        load.why_not[f"status {status}"] += 1
        load.response_ms.append((elapsed_ms, 0))


async def send_all(args, schedule_start, measure_from):
    """Pushes on a fixed schedule (open loop: push n goes at schedule_start + n / rate, answered or not),
    over keep-alive connections from a pool that grows when all are busy. One thread and event loop,
    so the client costs the machine little beside the processes measured."""
    url = urllib.parse.urlparse(args.intake)
    load = Load()
    pool = Pool(url, args.max_connections)
    for _ in range(min(args.connections, args.max_connections)):
        pool.open += 1
        pool.give_back(*await open_connection(url), None)
    tasks = set()
    total = int(args.rate * (args.warmup + args.seconds))
    for n in range(total):
        slot = schedule_start + n / args.rate
        delay = slot - time.time()
        if delay > 0:
            await asyncio.sleep(delay)
        task = asyncio.ensure_future(send_one(args, pool, load, n, slot, measure_from))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    if tasks:
        await asyncio.gather(*tasks)
    load.opened = pool.open
    for _, writer, _, _ in pool.idle:
        writer.close()
    return load


def psql(args, sql):
    out = subprocess.run(shlex.split(args.psql) + ["-qtAX", "-c", sql], check=True, capture_output=True, text=True)
    return out.stdout


def percentile(sorted_values, fraction):
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, int(round(fraction * (len(sorted_values) - 1)))))
    return sorted_values[index]


def main():
    args = parse_args()
    schedule_start = time.time() + 0.5
    start = schedule_start + args.warmup
    load = asyncio.run(send_all(args, schedule_start, start))
    elapsed = time.time() - start
    accepted = load.ok
    rejected = load.other
    answers = load.response_ms
    responses = sorted(ms for ms, _ in answers)

    lane = "" if args.lane is None else f" WHERE lane = {int(args.lane)}"
    deadline = time.time() + 60
    while int(psql(args, "SELECT count(*) FROM deliveries" + lane).strip() or 0) > 0:
        if time.time() > deadline:
            sys.exit("the outbox did not drain within 60 s")
        time.sleep(0.2)

    # The simulator speaks HTTP/2 only (urllib does not): curl fetches the record.
    out = subprocess.run(["curl", "-sS", "--max-time", "60", "--cacert", args.ca, args.sim + "/sim/received"],
                         check=True, capture_output=True, text=True)
    received = json.loads(out.stdout)
    receipt = {}
    for record in received:
        if record.get("status") != 200:
            continue
        headers = record.get("headers") or {}
        delivery = headers.get("apns-id")
        if not delivery:
            payload = record.get("payload") or {}
            delivery = ((payload.get("message") or {}).get("data") or {}).get("deliveryId")
        if delivery:
            receipt[delivery] = datetime.fromisoformat(record["receivedAt"].replace("Z", "+00:00")).timestamp()

    rows = psql(args, "SELECT h.id, extract(epoch FROM r.created_at), r.deliveries FROM delivery_history h "
                      "JOIN push_requests r ON r.id = h.request_id WHERE h.outcome = 'sent'"
                      # Requests of the warm-up are not counted (the intake's clock and this one are the machine's).
                      f" AND r.created_at >= to_timestamp({start:.6f})"
                      + ("" if args.lane is None else f" AND h.lane = {int(args.lane)}"))
    latencies = []
    by_devices = {1: [], 2: []}  # 2: two devices or more
    for line in rows.splitlines():
        if "|" not in line:
            continue
        delivery, created, devices = line.split("|")
        if delivery in receipt:
            latency = (receipt[delivery] - float(created)) * 1000
            latencies.append(latency)
            by_devices[1 if int(devices) == 1 else 2].append(latency)
    latencies.sort()
    why_not = "".join(f", {reason}: {count}" for reason, count in load.why_not.most_common() if count)
    why_not = f" ({why_not[2:]}; {load.not_answered} not answered)" if why_not else ""
    print(f"offered {args.rate}/s for {args.seconds} s after {args.warmup} s of warm-up: {accepted} accepted "
          f"({accepted / elapsed:.0f}/s), {rejected} not accepted{why_not}; open loop over {load.opened} connections, "
          f"sends at most {load.late_ms:.1f} ms behind their slots")
    print(f"intake answer (202) as the client saw it: p50 {percentile(responses, 0.5):.1f} ms, "
          f"p99 {percentile(responses, 0.99):.1f} ms")
    print(f"intake acceptance -> simulator receipt over {len(latencies)} deliveries: "
          f"p50 {percentile(latencies, 0.5):.1f} ms, p90 {percentile(latencies, 0.9):.1f} ms, "
          f"p99 {percentile(latencies, 0.99):.1f} ms, max {latencies[-1] if latencies else float('nan'):.1f} ms")
    for devices, label in ((1, "one-device requests"), (2, "requests to 2+ devices")):
        answered = sorted(ms for ms, n in answers if (n == 1) == (devices == 1) and n > 0)
        received = sorted(by_devices[devices])
        print(f"  {label}: {len(answered)} answered, p50 {percentile(answered, 0.5):.1f} ms, "
              f"p99 {percentile(answered, 0.99):.1f} ms; {len(received)} deliveries received, "
              f"p50 {percentile(received, 0.5):.1f} ms, p99 {percentile(received, 0.99):.1f} ms")


if __name__ == "__main__":
    main()
