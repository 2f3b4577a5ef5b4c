#!/usr/bin/env python3
"""Latency from intake acceptance to simulator receipt, at a steady push rate (bench/delivery).

Sends single-recipient pushes to herald-intake at --rate per second for --seconds (a fixed
schedule: each sender thread sleeps until its next slot, so a slow answer does not lower the
offered rate), waits for the outbox to drain, then joins what the simulator received
(GET /sim/received through curl: apns-id, or the deliveryId in an FCM message, and the receipt time) with
each delivery's request in Postgres (push_requests.created_at, the moment of acceptance).
Prints p50/p90/p99/max and the achieved rate. The first --warmup seconds run at the same rate and are
not counted: the statements' plans are rebuilt after the ANALYZE and CHECKPOINT the caller runs before
each rate, and every connection's caches start cold (docs/performance.md, the summary's "Latency").
Standard library only.
"""
import argparse
import http.client
import json
import shlex
import subprocess
import sys
import threading
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
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--lane", type=int, default=None,
                   help="only this lane's deliveries: wait for it to drain and measure it (bench/backfill: 0 while "
                        "a backfill drains in lane 1)")
    return p.parse_args()


def sender(args, index, schedule_start, measure_from, results):
    url = urllib.parse.urlparse(args.intake)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    per_thread = args.rate / args.threads
    total = int(per_thread * (args.warmup + args.seconds))
    ok = other = 0
    response_ms = []
    for n in range(total):
        slot = schedule_start + (n + index / args.threads) / per_thread
        delay = slot - time.time()
        if delay > 0:
            time.sleep(delay)
        # By when it is sent, as the deliveries are picked by their request's created_at: a client behind
        # its schedule sends warm-up slots after the warm-up.
        counted = time.time() >= measure_from
        user = (index * total + n) % args.users + 1
        body = json.dumps({"recipients": {"emails": [f"user{user}@bench.example"]},
                           "title": "Deposit pending", "body": "Confirmations: 1/6",
                           "data": {"txHash": "0x%064x" % n}})
        try:
            sent_at = time.time()
            conn.request("POST", "/api/partners/notifications/push", body=body,
                         headers={"Authorization": "Bearer " + args.key, "Content-Type": "application/json"})
            response = conn.getresponse()
            answer = response.read()
            elapsed_ms = (time.time() - sent_at) * 1000
            if not counted:
                continue
            if response.status == 202:
                ok += 1
                # One device or more: the intake writes a one-device push in its group commit and takes
                # two more round trips for more (Sources/Store/IntakeWriter.swift), so each is reported apart.
                response_ms.append((elapsed_ms, json.loads(answer).get("deliveries", 0)))
            else:
                other += 1
                response_ms.append((elapsed_ms, 0))
        except OSError:
            other += counted
            conn.close()
            conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    results[index] = (ok, other, response_ms)


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
    results = [None] * args.threads
    schedule_start = time.time() + 0.5
    start = schedule_start + args.warmup
    threads = [threading.Thread(target=sender, args=(args, i, schedule_start, start, results))
               for i in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - start
    accepted = sum(r[0] for r in results)
    rejected = sum(r[1] for r in results)
    answers = [a for r in results for a in r[2]]
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
    print(f"offered {args.rate}/s for {args.seconds} s after {args.warmup} s of warm-up: {accepted} accepted "
          f"({accepted / elapsed:.0f}/s), {rejected} not accepted")
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
