#!/usr/bin/env python3
"""The partner of bench/failover: single pushes at a fixed rate through a database failover.

Sends one single-recipient push every 1/--rate s (open loop: a push waiting for its answer or its
retry does not delay the next one), each with its own Idempotency-Key, over keep-alive HTTP/1.1
connections from a pool that grows while every connection is busy. A push answered 503 is sent
again with the same key after its Retry-After (at most 1 s); one whose connection failed, after
0.1 s; every other answer is final. A push still unanswered 60 s after its first attempt is given up.

Runs until --kill-file exists (bench/failover writes the kill's unix time into it) and --after
seconds have passed since that time, or, with --stop-file, until that file exists (a scenario of
bench/failover --patroni whose length the bench decides), then waits for the pushes still retrying. Writes every 2xx
answer's requestId to --ids (one a line) and a JSON summary to --out: pushes, accepted, answers by
status, the error codes of the answers that were not 2xx, connection errors, pushes given up, the first
error and the first 2xx of an attempt that started after it (unix times), the longest time without a 2xx
answer once the first came (a stall: requests waiting, not failing), the connections opened and how late
the sends ran; with --errors, also one line per answer that was not 2xx and per failed connection
("<unix time> <status or conn>"), for when the errors happened (bench/upgrade's seconds of 503).
bench/upgrade passes the end of its roll as the --kill-file.
Standard library only.
"""
import argparse
import asyncio
import collections
import json
import os
import socket
import time
import urllib.parse

CONNECTION_RETRY_S = 0.1
RETRY_AFTER_CAP_S = 1.0
GIVE_UP_S = 60.0


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--intake", required=True, help="http://127.0.0.1:PORT")
    p.add_argument("--auth-file", required=True, help='a file holding "Authorization: Bearer <key>"')
    p.add_argument("--users", type=int, required=True, help="recipients user1..userN@bench.example")
    p.add_argument("--rate", type=int, default=200)
    p.add_argument("--run", required=True, help="prefix of the Idempotency-Keys")
    p.add_argument("--kill-file", help="stop --after seconds after the unix time this file gets")
    p.add_argument("--stop-file", help="stop once this file exists")
    p.add_argument("--after", type=float, default=5)
    p.add_argument("--max-seconds", type=float, default=120, help="stop sending new pushes after this anyway")
    p.add_argument("--status", required=True, help='gets "sending" once the first push is due')
    p.add_argument("--ids", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--errors", help="optional: a line per non-2xx answer or failed connection")
    return p.parse_args()


class Record:
    def __init__(self):
        self.pushes = 0
        self.accepted = {}  # requestId -> status (202, or 200 for a replay)
        self.statuses = collections.Counter()  # every answer, retries included
        self.error_codes = collections.Counter()  # "503 database_unavailable": every answer not 2xx
        self.last_2xx_at = None
        self.longest_gap_s = 0.0
        self.connection_errors = 0
        self.given_up = 0
        self.first_error_at = None
        self.recovered_at = None
        self.opened = 0
        self.late_ms = 0.0
        self.errors = []  # (unix time, status or "conn")

    def error(self, at, what):
        self.errors.append((at, what))
        if self.first_error_at is None:
            self.first_error_at = at


class Pool:
    def __init__(self, url, record):
        self.url = url
        self.record = record
        self.idle = collections.deque()

    async def get(self):
        if self.idle:
            return self.idle.popleft()
        reader, writer = await asyncio.open_connection(self.url.hostname, self.url.port)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.record.opened += 1
        return reader, writer

    def put(self, connection):
        self.idle.append(connection)

    def close(self):
        for _, writer in self.idle:
            writer.close()


async def attempt(pool, request):
    """One exchange: (status, headers, body); raises on a failed connection."""
    reader, writer = await pool.get()
    try:
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        headers = {}
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower().decode()] = value.strip().decode()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
    except BaseException:
        writer.close()
        raise
    if headers.get("connection", "").lower() == "close":
        writer.close()
    else:
        pool.put((reader, writer))
    return status, headers, body


async def push(args, pool, record, auth, n):
    user = n % args.users + 1
    body = json.dumps({"recipients": {"emails": [f"user{user}@bench.example"]},
                       "title": "Deposit pending", "body": f"Confirmations: {n}/6"}).encode()
    request = (f"POST /api/partners/notifications/push HTTP/1.1\r\nHost: {pool.url.hostname}\r\n"
               f"{auth}\r\nContent-Type: application/json\r\nIdempotency-Key: {args.run}-{n}\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    record.pushes += 1
    give_up = time.time() + GIVE_UP_S
    while True:
        started = time.time()
        try:
            status, headers, answer = await attempt(pool, request)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, IndexError):
            record.connection_errors += 1
            record.error(time.time(), "conn")
            delay = CONNECTION_RETRY_S
        else:
            record.statuses[status] += 1
            if 200 <= status < 300:
                record.accepted[json.loads(answer)["requestId"]] = status
                now = time.time()
                if record.last_2xx_at is not None:
                    record.longest_gap_s = max(record.longest_gap_s, now - record.last_2xx_at)
                record.last_2xx_at = now
                if (record.first_error_at is not None and record.recovered_at is None
                        and started > record.first_error_at):
                    record.recovered_at = time.time()
                return
            record.error(time.time(), str(status))
            try:
                code = json.loads(answer)["error"]["code"]
            except (ValueError, KeyError, TypeError):
                code = "(no error body)"
            record.error_codes[f"{status} {code}"] += 1
            if status != 503:
                return  # final: a 500 is what the bench exists to catch, a 4xx is the request's own
            try:
                delay = min(float(headers.get("retry-after", "1")), RETRY_AFTER_CAP_S)
            except ValueError:
                delay = RETRY_AFTER_CAP_S
        if time.time() + delay > give_up:
            record.given_up += 1
            return
        await asyncio.sleep(delay)


def kill_time(path):
    try:
        with open(path) as f:
            return float(f.read().strip())
    except (OSError, ValueError):
        return None


async def run(args, record):
    url = urllib.parse.urlparse(args.intake)
    pool = Pool(url, record)
    with open(args.auth_file) as f:
        auth = f.read().strip()
    tasks = set()
    start = time.time() + 0.2
    with open(args.status, "w") as f:
        f.write(f"sending {start:.6f}\n")
    n = 0
    stop_at = start + args.max_seconds
    while True:
        slot = start + n / args.rate
        killed = kill_time(args.kill_file) if args.kill_file and os.path.exists(args.kill_file) else None
        if killed is not None:
            stop_at = min(stop_at, killed + args.after)
        if slot >= stop_at or (args.stop_file and os.path.exists(args.stop_file)):
            break
        delay = slot - time.time()
        if delay > 0:
            await asyncio.sleep(delay)
        else:
            record.late_ms = max(record.late_ms, -delay * 1000)
        task = asyncio.ensure_future(push(args, pool, record, auth, n))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        n += 1
    if tasks:
        await asyncio.gather(*tasks)
    pool.close()


def main():
    args = parse_args()
    if not args.kill_file and not args.stop_file:
        raise SystemExit("failover_client.py: give --kill-file or --stop-file")
    record = Record()
    asyncio.run(run(args, record))
    with open(args.ids, "w") as f:
        for request_id in record.accepted:
            f.write(request_id + "\n")
    summary = {
        "pushes": record.pushes, "accepted": len(record.accepted),
        "replayed": sum(1 for status in record.accepted.values() if status == 200),
        "statuses": {str(k): v for k, v in sorted(record.statuses.items())},
        "error_codes": dict(sorted(record.error_codes.items())),
        "longest_gap_s": round(record.longest_gap_s, 2),
        "connection_errors": record.connection_errors, "given_up": record.given_up,
        "first_error_at": record.first_error_at, "recovered_at": record.recovered_at,
        "connections": record.opened, "late_ms": round(record.late_ms, 1),
    }
    with open(args.out, "w") as f:
        json.dump(summary, f)
    if args.errors:
        with open(args.errors, "w") as f:
            for at, what in record.errors:
                f.write(f"{at:.3f} {what}\n")


if __name__ == "__main__":
    main()
