#!/usr/bin/env python3
"""Load and latency helpers of bench/live-activities. Standard library only.

Subcommands:
  starts   starts one Live Activity for each of users FIRST..LAST (user<N>@bench.example) through the
           intake, from --threads keep-alive connections; every answer must be a 201.
  paced    updates at a fixed --rate per second for --seconds (each thread sleeps until its next slot, so
           a slow answer does not lower the offered rate), spread round-robin over the activity ids in
           --ids, each with a unique statusText; then waits for the outbox to drain and matches what the
           simulator received (content-state.statusText on APNs, the state JSON of an FCM message) with
           the moment each update was sent: p50/p90/p99/max, and how many updates reached no device
           (coalesced into a newer one before it was sent).
  trickle  pushes at a fixed --rate to --users (user<N>@bench.example, each with one iPhone) until the
           file --stop exists; then waits for those pushes to be sent and writes one line per delivery,
           "<sent epoch> <latency ms>", to --out (latency: request sent -> simulator receipt).
  windows  percentiles of a trickle file split at the epochs given (before, between, after).
"""
import argparse
import http.client
import json
import os
import shlex
import subprocess
import sys
import threading
import time
import urllib.parse
from datetime import datetime


def percentile(values, fraction):
    if not values:
        return float("nan")
    index = min(len(values) - 1, max(0, int(round(fraction * (len(values) - 1)))))
    return values[index]


def summary(values):
    values = sorted(values)
    if not values:
        return "no samples"
    return (f"p50 {percentile(values, 0.5):.1f} ms, p90 {percentile(values, 0.9):.1f} ms, "
            f"p99 {percentile(values, 0.99):.1f} ms, max {values[-1]:.1f} ms over {len(values)}")


def connection(intake):
    url = urllib.parse.urlparse(intake)
    return http.client.HTTPConnection(url.hostname, url.port, timeout=30)


def post(conn, path, key, body):
    conn.request("POST", path, body=body,
                 headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    response = conn.getresponse()
    return response.status, response.read()


def psql(command, sql):
    out = subprocess.run(shlex.split(command) + ["-qtAX", "-c", sql], check=True, capture_output=True, text=True)
    return out.stdout.strip()


def received(sim, ca, query=""):
    # The simulator speaks HTTP/2 only (http.client does not): curl fetches the record.
    out = subprocess.run(["curl", "-sS", "--max-time", "120", "--cacert", ca, sim + "/sim/received" + query],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def epoch(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def wait_drained(command, condition, seconds=300):
    deadline = time.time() + seconds
    while psql(command, f"SELECT EXISTS (SELECT 1 FROM deliveries WHERE {condition})::int") == "1":
        if time.time() > deadline:
            sys.exit(f"the outbox still holds rows ({condition}) after {seconds} s")
        time.sleep(0.2)


# --- starts ----------------------------------------------------------------------------------------

def starts(args):
    users = list(range(args.first, args.last + 1))
    failures = []
    lock = threading.Lock()

    def run(index):
        conn = connection(args.intake)
        for user in users[index::args.threads]:
            body = json.dumps({
                "recipient": {"email": f"user{user}@bench.example"}, "template": "progress",
                "attributes": {"title": "Deposit confirmation", "subtitle": f"0x{user:040x}"[:14]},
                "state": {"stages": ["Confirming", "Processing", "Completed"], "currentStage": 0,
                          "progress": 0.0, "statusText": "Confirmations: 0/6"},
                "ttlSeconds": args.ttl})
            status, text = post(conn, "/api/partners/live-activities", args.key, body)
            if status != 201:
                with lock:
                    failures.append(f"user{user}: {status} {text[:200]!r}")

    began = time.time()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - began
    if failures:
        sys.exit(f"{len(failures)} starts failed, first: {failures[0]}")
    print(f"{len(users)} starts in {elapsed:.1f} s = {len(users) / elapsed:.0f} starts/s")


# --- paced updates ---------------------------------------------------------------------------------

def paced(args):
    with open(args.ids) as f:
        ids = [line.strip() for line in f if line.strip()]
    per_thread = args.rate / args.threads
    total = int(per_thread * args.seconds)
    sent = {}  # statusText -> (sent epoch, answered epoch)
    counts = [None] * args.threads
    schedule_start = time.time() + 0.5

    def run(index):
        conn = connection(args.intake)
        ok = other = 0
        local = {}
        for n in range(total):
            slot = schedule_start + (n + index / args.threads) / per_thread
            delay = slot - time.time()
            if delay > 0:
                time.sleep(delay)
            activity = ids[(n * args.threads + index) % len(ids)]
            text = f"paced {index}-{n}"
            body = json.dumps({"state": {"progress": round((n % 100) / 100, 2), "statusText": text}})
            try:
                before = time.time()
                status, _ = post(conn, f"/api/partners/live-activities/{activity}/update", args.key, body)
                if status == 200:
                    ok += 1
                    local[text] = (before, time.time())
                else:
                    other += 1
            except OSError:
                other += 1
                conn.close()
                conn = connection(args.intake)
        counts[index] = (ok, other)
        sent.update(local)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - schedule_start
    accepted = sum(c[0] for c in counts)
    rejected = sum(c[1] for c in counts)
    wait_drained(args.psql, "activity_event = 'update'")

    from_send, from_answer, answer = [], [], []
    delivered = set()
    for record in received(args.sim, args.ca):
        if record.get("status") != 200:
            continue
        payload = record.get("payload") or {}
        text = None
        if record.get("service") == "apns":
            text = ((payload.get("aps") or {}).get("content-state") or {}).get("statusText")
        else:
            state = ((payload.get("message") or {}).get("data") or {}).get("state")
            if state:
                text = json.loads(state).get("statusText")
        if text in sent:
            before, after = sent[text]
            at = epoch(record["receivedAt"])
            from_send.append((at - before) * 1000)
            from_answer.append((at - after) * 1000)
            delivered.add(text)
    answer = [(after - before) * 1000 for before, after in sent.values()]
    print(f"offered {args.rate}/s for {args.seconds} s: {accepted} accepted ({accepted / elapsed:.0f}/s), "
          f"{rejected} not accepted")
    print(f"intake answer (200) as the client saw it: {summary(answer)}")
    print(f"update sent -> simulator receipt, per device push: {summary(from_send)}")
    print(f"intake answered -> simulator receipt, per device push: {summary(from_answer)}")
    print(f"updates that reached at least one device: {len(delivered)} of {accepted} "
          f"({accepted - len(delivered)} coalesced into a newer state before sending)")


# --- trickle of pushes -----------------------------------------------------------------------------

def trickle(args):
    users = [int(u) for u in args.users.split(",")]
    interval = 1.0 / args.rate
    began = time.time()
    sent = []  # (request id, sent epoch)
    conn = connection(args.intake)
    n = 0
    while not os.path.exists(args.stop):
        slot = began + n * interval
        delay = slot - time.time()
        if delay > 0:
            time.sleep(delay)
        user = users[n % len(users)]
        body = json.dumps({"recipients": {"emails": [f"user{user}@bench.example"]},
                           "title": "Deposit pending", "body": "Confirmations: 1/6"})
        before = time.time()
        try:
            status, text = post(conn, "/api/partners/notifications/push", args.key, body)
        except OSError:
            conn.close()
            conn = connection(args.intake)
            status, text = 0, b""
        if status == 202:
            sent.append((json.loads(text)["requestId"], before))
        n += 1
    wait_drained(args.psql, "activity_id IS NULL")

    # apns-id is the delivery id; the history row names its request.
    receipt = {}
    for user in users:
        token = psql(args.psql, f"SELECT apns_token FROM devices WHERE user_id = 'u{user}' AND device_id = 'iphone'")
        for record in received(args.sim, args.ca, f"?token={token}"):
            if record.get("status") == 200 and (record.get("headers") or {}).get("apns-id"):
                receipt[record["headers"]["apns-id"]] = epoch(record["receivedAt"])
    requests = dict(sent)
    lines = []
    rows = psql(args.psql, "SELECT id, request_id FROM delivery_history WHERE activity_event IS NULL "
                           "AND outcome = 'sent'")
    for row in rows.splitlines():
        delivery, request = row.split("|")
        if request in requests and delivery in receipt:
            lines.append(f"{requests[request]:.6f} {(receipt[delivery] - requests[request]) * 1000:.3f}")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"trickle: {len(sent)} pushes accepted of {n} sent at {args.rate}/s, {len(lines)} receipts matched")


def windows(args):
    samples = []
    with open(args.file) as f:
        for line in f:
            if line.strip():
                at, ms = line.split()
                samples.append((float(at), float(ms)))
    edges = [float(e) for e in args.edges.split(",")] if args.edges else []
    names = args.names.split(",")
    bounds = [float("-inf")] + edges + [float("inf")]
    for i, name in enumerate(names):
        values = [ms for at, ms in samples if bounds[i] <= at < bounds[i + 1]]
        print(f"{name}: {summary(values)}")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("starts")
    s.add_argument("--intake", required=True)
    s.add_argument("--key", required=True)
    s.add_argument("--first", type=int, required=True)
    s.add_argument("--last", type=int, required=True)
    s.add_argument("--ttl", type=int, default=28800)
    s.add_argument("--threads", type=int, default=16)
    s = sub.add_parser("paced")
    for name in ("--intake", "--key", "--ids", "--sim", "--ca", "--psql"):
        s.add_argument(name, required=True)
    s.add_argument("--rate", type=int, default=500)
    s.add_argument("--seconds", type=int, default=20)
    s.add_argument("--threads", type=int, default=16)
    s = sub.add_parser("trickle")
    for name in ("--intake", "--key", "--users", "--sim", "--ca", "--psql", "--stop", "--out"):
        s.add_argument(name, required=True)
    s.add_argument("--rate", type=int, default=20)
    s = sub.add_parser("windows")
    s.add_argument("--file", required=True)
    s.add_argument("--edges", default="")
    s.add_argument("--names", required=True)
    args = p.parse_args()
    {"starts": starts, "paced": paced, "trickle": trickle, "windows": windows}[args.command](args)


if __name__ == "__main__":
    main()
