#!/usr/bin/env python3
"""bench/soak's verdict: what the partners were told (soak_load.py's record), what Postgres recorded, what
the simulator received, the chaos that ran and the processes' memory, joined into one table.

Files in --work (bench/soak writes them):
  ops.jsonl       every call the partners made and how it ended (soak_load.py)
  events.tsv      the chaos: kind, start and end (UNIX seconds), detail
  rss.tsv         time, then the RSS (kB) of each followed process, by the header's names
  received.json   GET /sim/received at the end
  history.csv     every recorded delivery: id, request_id, service, user_id, device_id, outcome,
                  activity_event, replayed, finished (UNIX seconds)
  requests.csv    every push request: id, idempotency_key, lane, deliveries, sent, failed
  activities.csv  every Live Activity: id, status
  devices.csv     user_id, device_id, apns_token, apns_push_to_start_token, fcm_token
  outbox.txt      rows left in the outbox, Live Activity events held, after the drain

The checks (each a row of the table, each must hold):
  lost        every request a partner got a 2xx for is in Postgres, each of its deliveries (the answer's
              `deliveries`) was sent and the simulator answered it 200 at least once; the backfill's
              requests alike; every Live Activity the partner ended reached the end on every phone that
              had its start
  defects     no 5xx other than 503; no call left unanswered; no two requests under one key
  duplicates  a delivery the simulator accepted twice is allowed only when its first receipt fell in a
              crash window: a worker's SIGKILL (10 s before it to 1 s after), a Postgres restart or
              failover (10 s before it began to 10 s after it ended), or a simulator episode that dropped
              connections (its span and 5 s after)
  stuck       nothing left in the outbox and no Live Activity event held after the drain
  RSS         each followed process's RSS at the end is within 10% + 8 MB of its RSS after warm-up
              (the median of the samples from --warmup seconds on, for a tenth of the run) -- the
              simulator is shown but not judged: it keeps every request it answered, by design
Standard library only. Exit status 1 when a check fails.
"""
import argparse
import collections
import csv
import json
import os
import statistics
import sys
from datetime import datetime, timezone


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--work", required=True)
    p.add_argument("--seconds", type=float, required=True, help="the load's length")
    p.add_argument("--started", type=float, required=True, help="UNIX time the load began")
    p.add_argument("--warmup", type=float, default=120)
    p.add_argument("--judged", default="", help="comma-separated rss.tsv columns whose growth is judged")
    return p.parse_args()


def rows(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def receipt_time(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc).timestamp()


def main():
    a = parse_args()
    w = lambda name: os.path.join(a.work, name)
    table = []
    failures = []

    def row(what, figure, ok=True):
        table.append((what, figure, "" if ok else "FAIL"))
        if not ok:
            failures.append(what)

    # --- the partners' record
    ops = []
    summary = {}
    with open(w("ops.jsonl")) as f:
        for line in f:
            op = json.loads(line)
            if op["kind"] == "summary":
                summary = op
            else:
                ops.append(op)
    by_kind = collections.defaultdict(list)
    for op in ops:
        by_kind[op["kind"]].append(op)

    # --- Postgres
    history = [dict(zip(("id", "request", "service", "user", "device", "outcome", "event", "replayed", "finished"), r))
               for r in rows(w("history.csv"))]
    requests = {r[0]: {"key": r[1], "lane": int(r[2]), "deliveries": int(r[3]), "sent": int(r[4]), "failed": int(r[5])}
                for r in rows(w("requests.csv"))}
    activities = {r[0]: r[1] for r in rows(w("activities.csv"))}
    tokens = {}
    for user, device, apns, start, fcm in rows(w("devices.csv")):
        for token in (apns, start, fcm):
            if token:
                tokens[token] = (user, device)
    outbox, held = (int(x) for x in open(w("outbox.txt")).read().split())

    # --- the simulator: 200 receipts by delivery id (APNs apns-id, FCM data.deliveryId), and the Live
    # Activity messages to Android by (activity, device, event)
    with open(w("received.json")) as f:
        received = json.load(f)
    receipts = collections.defaultdict(list)
    android_activity = collections.Counter()
    answers = collections.Counter()
    for r in received:
        answers[(r["service"], r["status"])] += 1
        if r["status"] != 200:
            continue
        at = receipt_time(r["receivedAt"])
        if r["service"] == "apns":
            receipts[r["headers"].get("apns-id", "")].append(at)
            continue
        data = ((r.get("payload") or {}).get("message") or {}).get("data") or {}
        if "deliveryId" in data:
            receipts[data["deliveryId"]].append(at)
        elif "activityId" in data:
            user_device = tokens.get(r["token"], (None, None))
            android_activity[(data["activityId"], user_device[1], data.get("event"))] += 1

    def delivered(h):
        if h["service"] == "fcm" and h["event"]:
            return android_activity[(h["request"], h["device"], h["event"])] > 0
        return len(receipts.get(h["id"], ())) > 0

    by_request = collections.defaultdict(list)
    for h in history:
        by_request[h["request"]].append(h)

    def request_lost(request_id, deliveries):
        """Why a push request's deliveries did not all arrive, or None."""
        if request_id not in requests:
            return "not in Postgres"
        sent = {(h["user"], h["device"]) for h in by_request[request_id] if h["outcome"] == "sent" and delivered(h)}
        if len(sent) != deliveries:
            outcomes = collections.Counter(h["outcome"] for h in by_request[request_id])
            return f"{len(sent)} of {deliveries} delivered ({dict(outcomes)})"
        return None

    # --- pushes
    lost = []
    defects = collections.Counter()
    for kind in ("single", "bulk", "replay"):
        accepted = [op for op in by_kind[kind] if op["status"] is not None and 200 <= op["status"] < 300]
        refused = collections.Counter(f'{op["status"]} {(op.get("error") or {}).get("code")}'
                                      for op in by_kind[kind] if op["status"] is not None and op["status"] >= 300)
        deliveries = 0
        for op in accepted:
            deliveries += op.get("deliveries", 0)
            why = request_lost(op.get("requestId"), op.get("deliveries", 0))
            if why:
                lost.append((op["key"], why))
        if by_kind[kind] or kind != "replay":
            row(f"{kind} pushes accepted", f"{len(accepted)} of {len(by_kind[kind])}, {deliveries} deliveries"
                + (f"; refused {dict(refused)}" if refused else ""), ok=not refused)
    keys = collections.Counter(r["key"] for r in requests.values() if r["key"])
    defects["two requests under one Idempotency-Key"] = sum(1 for n in keys.values() if n > 1)

    # --- the backfill's requests: lane 1, no key
    backfill = [rid for rid, r in requests.items() if r["lane"] == 1 and not r["key"]]
    backfill_deliveries = sum(requests[rid]["deliveries"] for rid in backfill)
    for rid in backfill:
        why = request_lost(rid, requests[rid]["deliveries"])
        if why:
            lost.append((f"backfill {rid}", why))
    row("backfill requests", f"{len(backfill)}, {backfill_deliveries} deliveries")

    # --- Live Activities
    starts = [op for op in by_kind["activity-start"] if op["status"] == 201]
    ends = {op["activityId"]: op for op in by_kind["activity-end"] if op["status"] == 200}
    updates = [op for op in by_kind["activity-update"] if op["status"] == 200]
    activity_refused = collections.Counter(f'{op["kind"]} {op["status"]} {(op.get("error") or {}).get("code")}'
                                           for k in ("activity-start", "activity-update", "activity-end", "activity-token")
                                           for op in by_kind[k] if op["status"] is None or op["status"] >= 300)
    for op in starts:
        activity = op["activityId"]
        rows_of = by_request.get(activity, [])
        if activity not in ends:
            lost.append((op["key"], "started, never ended by the partner"))
            continue
        if activities.get(activity) != "ended":
            lost.append((op["key"], f"status {activities.get(activity)} after its end"))
        for h in rows_of:
            if h["outcome"] not in ("sent", "superseded"):
                lost.append((op["key"], f"{h['event']} to {h['device']}: {h['outcome']}"))
            elif h["outcome"] == "sent" and not delivered(h):
                lost.append((op["key"], f"{h['event']} to {h['device']} recorded sent, not received"))
        started = {h["device"] for h in rows_of if h["event"] == "start" and h["outcome"] == "sent"}
        ended = {h["device"] for h in rows_of if h["event"] == "end" and h["outcome"] == "sent"}
        if started - ended:
            lost.append((op["key"], f"no end on {sorted(started - ended)}"))
    row("Live Activities started and ended", f"{len(starts)} started, {len(ends)} ended, {len(updates)} updates"
        + (f"; not accepted {dict(activity_refused)}" if activity_refused else ""), ok=not activity_refused)

    # --- every call
    calls = [op for op in ops]
    unanswered = [op for op in calls if op["status"] is None]
    defects["5xx other than 503"] = sum(op.get("status5xx", 0) for op in calls)
    defects["calls unanswered until given up"] = len(unanswered)
    retried = [op for op in calls if op.get("noAnswer")]
    row("calls", f"{len(calls)}: {sum(op.get('status503', 0) for op in calls)} answers 503 (retried), "
        f"{len(retried)} calls retried after no answer, {sum(op.get('conflicts', 0) for op in calls)} conflicts retried; "
        f"scheduler's worst lag {summary.get('maxLagSeconds', '?')} s")
    examples = [op.get("firstDefect") for op in calls if op.get("firstDefect")][:3]
    row("defects", ", ".join(f"{k} {v}" for k, v in defects.items())
        + (f"; first: {examples}" if examples else ""), ok=not any(defects.values()))

    # --- chaos windows and duplicates
    events = [line.rstrip("\n").split("\t") for line in open(w("events.tsv")) if line.strip()]
    windows = []
    chaos = collections.Counter()
    spans = collections.defaultdict(list)
    for kind, start, end, *_ in events:
        start, end = float(start), float(end)
        chaos[kind] += 1
        spans[kind].append(end - start)
        if kind == "worker-kill":
            windows.append((start - 10, end + 1, kind))
        elif kind in ("postgres-restart", "failover"):
            windows.append((start - 10, end + 10, kind))
        elif kind == "faults-drop":
            windows.append((start, end + 5, kind))
    duplicates = {rid: sorted(times) for rid, times in receipts.items() if len(times) > 1}
    by_window = collections.Counter()
    outside = []
    for rid, times in duplicates.items():
        kinds = sorted({kind for lo, hi, kind in windows if lo <= times[0] <= hi})
        if kinds:
            by_window[" or ".join(kinds)] += 1
        else:
            outside.append(rid)
    # A call retried after no answer must have made one request (the key check above) whose deliveries
    # went out once, unless a crash window explains a second send.
    outside_set = set(outside)
    no_answer_requests = {op.get("requestId") for op in retried if op.get("requestId")}
    retried_twice = sum(1 for rid in no_answer_requests
                        if any(h["id"] in outside_set for h in by_request.get(rid, [])))
    extra = sum(len(t) - 1 for t in duplicates.values())
    row("duplicates", f"{len(duplicates)} deliveries received twice or more ({extra} extra sends): "
        f"{len(duplicates) - len(outside)} inside crash windows ({', '.join(f'{k} {n}' for k, n in sorted(by_window.items()))}), "
        f"{len(outside)} outside; "
        f"of the {len(no_answer_requests)} requests retried after no answer, {retried_twice} sent twice outside them",
        ok=not outside)
    if outside:
        for rid in outside[:5]:
            print(f"  outside every window: {rid} at {duplicates[rid]}", file=sys.stderr)

    lost_requests = len(lost)
    row("lost (accepted, not delivered)", str(lost_requests), ok=lost_requests == 0)
    for key, why in lost[:10]:
        print(f"  lost: {key}: {why}", file=sys.stderr)
    row("stuck after the drain", f"{outbox} rows in the outbox, {held} Live Activity events held",
        ok=outbox == 0 and held == 0)
    outcomes = collections.Counter(h["outcome"] for h in history)
    row("outcomes recorded", ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    row("simulator answers", ", ".join(f"{s} {c} {n}" for (s, c), n in sorted(answers.items())))
    row("chaos", ", ".join(f"{k} {n} (longest {max(spans[k]):.1f} s)" for k, n in sorted(chaos.items())))

    # --- memory
    with open(w("rss.tsv")) as f:
        header = f.readline().split()
        samples = [[float(x) for x in line.split()] for line in f if line.strip()]
    judged = [name for name in a.judged.split(",") if name]
    warm_from = a.started + a.warmup
    warm_to = warm_from + max(60.0, a.seconds / 10)
    load_end = a.started + a.seconds
    for column, name in enumerate(header[1:], start=1):
        warm = [s[column] for s in samples if warm_from <= s[0] <= warm_to and s[column] > 0]
        end = [s[column] for s in samples if load_end - max(60.0, a.seconds / 20) <= s[0] <= load_end and s[column] > 0]
        peak = max((s[column] for s in samples if s[column] > 0), default=0)
        if not warm or not end:
            row(f"RSS {name}", "too few samples", ok=name not in judged)
            continue
        w0, w1 = statistics.median(warm), statistics.median(end)
        flat = w1 <= w0 * 1.10 + 8192
        row(f"RSS {name}", f"{w0 / 1024:.1f} MB after warm-up, {w1 / 1024:.1f} MB at the end "
            f"({100 * (w1 - w0) / w0:+.1f}%), peak {peak / 1024:.1f} MB" + ("" if name in judged else " (not judged)"),
            ok=flat or name not in judged)

    width = max(len(t[0]) for t in table)
    print(f"{'check':<{width}}  figure")
    for what, figure, mark in table:
        print(f"{what:<{width}}  {figure}{'  <- ' + mark if mark else ''}")
    print("verdict: " + ("PASS" if not failures else "FAIL (" + "; ".join(failures) + ")"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
