#!/usr/bin/env python3
"""The partners of bench/soak: a steady mix of API calls, each retried with its Idempotency-Key until it
gets an answer, as a partner's backend would.

  single   one-recipient pushes at --rate per second on a fixed schedule (open loop: a slow answer does
           not delay the next push; --threads senders share the schedule)
  bulk     a push to --bulk-recipients users every --bulk-interval seconds
  activity Live Activities one after another: start, the host reports the iPhone's activity token, a
           silent update, an alerted update, the end

A call is retried (the same key, the same body) after no answer (a connection refused or cut: the intake
was killed or restarted), a 503 (the database is switching; Retry-After honoured, at most 2 s), a 409
conflict and any other 5xx, alternating between the intakes given, until it gets another answer or
--give-up seconds pass. Every call that ended is one JSON line in --out: kind, key, the final status, the
ids and counts of the answer, when it was first sent and answered, and how its attempts went (no answer,
5xx). A 5xx other than 503 is a defect: it is counted and reported, and the call is retried. Standard
library only. Stops at --seconds, or on SIGTERM, then waits (at most --give-up seconds) for the calls
under way.
"""
import argparse
import http.client
import json
import queue
import random
import signal
import threading
import time


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--intakes", required=True, help="comma-separated host:port of the intakes")
    p.add_argument("--key", required=True, help="the partner's API key")
    p.add_argument("--host-token", required=True)
    p.add_argument("--users", type=int, required=True)
    p.add_argument("--activity-users", type=int, required=True, help="users 1..N have a session with the mini-app")
    p.add_argument("--rate", type=float, default=20)
    p.add_argument("--threads", type=int, default=48)
    p.add_argument("--bulk-recipients", type=int, default=1000)
    p.add_argument("--bulk-interval", type=float, default=60)
    p.add_argument("--activity-pause", type=float, default=2, help="seconds between two activities")
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--give-up", type=float, default=600)
    p.add_argument("--out", required=True)
    return p.parse_args()


def email(user):
    return f"user{user}@soak.example"


class Client:
    """One sender's keep-alive connections, one per intake."""

    def __init__(self, intakes, timeout=20):
        self.intakes = intakes
        self.timeout = timeout
        self.connections = {}
        self.turn = random.randrange(len(intakes))

    def _connection(self, intake):
        connection = self.connections.get(intake)
        if connection is None:
            host, port = intake.rsplit(":", 1)
            connection = http.client.HTTPConnection(host, int(port), timeout=self.timeout)
            self.connections[intake] = connection
        return connection

    def _drop(self, intake):
        connection = self.connections.pop(intake, None)
        if connection is not None:
            connection.close()

    def once(self, method, path, token, body, key):
        """One attempt on the next intake: (status, headers, body) or None for no answer."""
        intake = self.intakes[self.turn % len(self.intakes)]
        self.turn += 1
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        if key is not None:
            headers["Idempotency-Key"] = key
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        try:
            connection = self._connection(intake)
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            text = response.read()
            if response.getheader("Connection", "").lower() == "close":
                self._drop(intake)
            return response.status, response, text
        except (OSError, http.client.HTTPException):
            self._drop(intake)
            return None

    def call(self, method, path, token, body, key, give_up):
        """Retries until an answer that is not 503, 409 conflict or 5xx; returns (status, json, record)."""
        record = {"attempts": 0, "noAnswer": 0, "status503": 0, "status5xx": 0, "conflicts": 0, "sentAt": time.time()}
        deadline = time.monotonic() + give_up
        while True:
            record["attempts"] += 1
            answer = self.once(method, path, token, body, key)
            if answer is None:
                record["noAnswer"] += 1
                wait = 0.2
            else:
                status, response, text = answer
                if status == 503 or status == 409 and b'"conflict"' in text:
                    record["status503" if status == 503 else "conflicts"] += 1
                    try:
                        wait = min(2.0, float(response.getheader("Retry-After") or 1))
                    except ValueError:
                        wait = 1.0
                elif status >= 500:
                    record["status5xx"] += 1
                    record.setdefault("firstDefect", text.decode(errors="replace")[:300])
                    wait = 0.5
                else:
                    record["answeredAt"] = time.time()
                    try:
                        parsed = json.loads(text) if text else {}
                    except ValueError:
                        parsed = {}
                    return status, parsed, record
            if time.monotonic() + wait > deadline:
                record["answeredAt"] = time.time()
                return None, {}, record
            time.sleep(wait)


class Soak:
    def __init__(self, args):
        self.args = args
        self.intakes = args.intakes.split(",")
        self.out = open(args.out, "a", buffering=1)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.start = time.monotonic()
        self.lag = 0.0

    def write(self, kind, key, status, answer, record, **extra):
        line = {"kind": kind, "key": key, "status": status, **record, **extra}
        for field in ("requestId", "activityId", "deliveries", "recipients", "result"):
            if field in answer:
                line[field] = answer[field]
        if status is not None and status >= 400:
            line["error"] = answer.get("error")
        with self.lock:
            self.out.write(json.dumps(line, separators=(",", ":")) + "\n")

    def push_body(self, users, title, n):
        return {"recipients": {"emails": [email(u) for u in users]}, "title": title, "body": f"soak {n}",
                "deepLink": f"basedapp://miniapp/fun.soak.app/n/{n}", "data": {"n": str(n)}}

    # --- single pushes: a scheduler hands numbers to the senders at the fixed rate
    def singles(self):
        work = queue.Queue()
        senders = [threading.Thread(target=self.single_sender, args=(work,), daemon=True)
                   for _ in range(self.args.threads)]
        for sender in senders:
            sender.start()
        n = 0
        while not self.stopping.is_set():
            due = self.start + n / self.args.rate
            now = time.monotonic()
            if due > now:
                time.sleep(min(due - now, 0.5))
                continue
            self.lag = max(self.lag, now - due)
            work.put(n)
            n += 1
        for _ in senders:
            work.put(None)
        for sender in senders:
            sender.join()

    def single_sender(self, work):
        client = Client(self.intakes)
        while True:
            n = work.get()
            if n is None:
                return
            user = random.randint(1, self.args.users)
            key = f"single-{n}"
            status, answer, record = client.call("POST", "/api/partners/notifications/push", self.args.key,
                                                 self.push_body([user], "Deposit received", n), key, self.args.give_up)
            self.write("single", key, status, answer, record)

    # --- 1,000-recipient pushes
    def bulks(self):
        client = Client(self.intakes)
        n = 0
        while not self.stopping.wait(self.args.bulk_interval if n else 5):
            users = random.sample(range(1, self.args.users + 1), min(self.args.bulk_recipients, self.args.users))
            key = f"bulk-{n}"
            status, answer, record = client.call("POST", "/api/partners/notifications/push", self.args.key,
                                                 self.push_body(users, "Season pass on sale", n), key, self.args.give_up)
            self.write("bulk", key, status, answer, record)
            n += 1

    # --- Live Activities
    def activities(self):
        client = Client(self.intakes)
        n = 0
        while not self.stopping.wait(self.args.activity_pause if n else 3):
            user = n % self.args.activity_users + 1
            self.activity(client, n, user)
            n += 1

    def activity(self, client, n, user):
        key = f"activity-{n}"
        body = {"recipient": {"email": email(user)}, "template": "progress",
                "attributes": {"title": "Deposit confirmation", "subtitle": f"soak {n}"},
                "state": {"stages": ["Confirming", "Processing", "Completed"], "currentStage": 0, "progress": 0.1},
                "ttlSeconds": 1800, "alert": {"title": "Deposit started"}}
        status, answer, record = client.call("POST", "/api/partners/live-activities", self.args.key, body,
                                             f"{key}-start", self.args.give_up)
        self.write("activity-start", f"{key}-start", status, answer, record, user=user)
        activity = answer.get("activityId")
        if status != 201 or not activity:
            return
        path = f"/api/partners/live-activities/{activity}"
        if user % 3 != 2:  # the user has an iPhone (bench/soak's users file): ActivityKit's token, reported by the host
            token = "%064x" % (0xA0000000 + n)
            status, answer, record = client.call("PUT", f"/api/internal/live-activities/{activity}/push-tokens/iphone",
                                                 self.args.host_token, {"token": token}, None, self.args.give_up)
            self.write("activity-token", f"{key}-token", status, answer, record, activityId=activity)
        for step, change in enumerate(({"state": {"currentStage": 1, "progress": 0.5}},
                                       {"state": {"currentStage": 2, "progress": 0.9},
                                        "alert": {"title": "Almost there"}})):
            time.sleep(0.5)
            status, answer, record = client.call("POST", f"{path}/update", self.args.key, change,
                                                 f"{key}-update-{step}", self.args.give_up)
            self.write("activity-update", f"{key}-update-{step}", status, answer, record, activityId=activity)
        time.sleep(0.5)
        status, answer, record = client.call("DELETE", path, self.args.key,
                                             {"state": {"progress": 1}, "alert": {"title": "Deposit received"}},
                                             f"{key}-end", self.args.give_up)
        self.write("activity-end", f"{key}-end", status, answer, record, activityId=activity)

    def run(self):
        signal.signal(signal.SIGTERM, lambda *_: self.stopping.set())
        threads = [threading.Thread(target=t) for t in (self.singles, self.bulks, self.activities)]
        for thread in threads:
            thread.start()
        self.stopping.wait(self.args.seconds)
        self.stopping.set()
        for thread in threads:
            thread.join()
        with self.lock:
            self.out.write(json.dumps({"kind": "summary", "maxLagSeconds": round(self.lag, 3)}) + "\n")


if __name__ == "__main__":
    Soak(parse_args()).run()
