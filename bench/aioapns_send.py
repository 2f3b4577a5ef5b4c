#!/usr/bin/env python3
"""Sends APNs notifications with aioapns (PyPI), the third-party client a Herald user might pick instead.

Used two ways:
  - as a judge (Tests/SimulatorTests/ThirdPartyClientTests.swift): a real client, unmodified, must get 200s
    from herald-sim, and the reasons it reports for failures must be Apple's;
  - as a benchmark peer: the same script against herald-sim or anything else that speaks APNs.

aioapns has no URL option: it always connects to api.push.apple.com:443. The only thing changed here is that
address (the protocol class's APNS_SERVER and APNS_PORT, which aioapns also writes into the `host` header) and
the TLS context (trusting --ca-file). The context gets no ALPN list, because aioapns sets none: that is the
point of the exercise (APNs answers such clients with HTTP/2 by prior knowledge).

Run with the project's virtual environment (scripts/setup makes it):
  .build/venv/bin/python bench/aioapns_send.py --host 127.0.0.1 --port 8443 --ca-file ca.pem \
      --key-file apns-key.p8 --key-id SIMKEY0001 --team-id SIMTEAM001 --topic app.herald.demo \
      --count 1000 --concurrency 100

bench/compare runs two of these, each with --requests-file holding its half of the APNs requests Herald's
workers send (token, apns-id, body), and adds their counts over [min startedAt, max finishedAt].

Prints one JSON object:
  {"client":"aioapns","sent":N,"failed":N,"seconds":S,"requestsPerSecond":R,
   "startedAt":T,"finishedAt":T (Unix seconds: the first send and the last answer),
   "statuses":{"200":N,...},"reasons":{"Unregistered":N,...}}
with "results":[{"id","token","status","reason"}, ...] (in sending order) when --details is given.
Exit status: 0 when every notification was answered 200 (or --allow-failures), 1 otherwise, 2 on bad usage.
"""

import argparse
import asyncio
import json
import secrets
import ssl
import sys
import time
from importlib import metadata

from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsProductionClientProtocol


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description="Send APNs notifications with aioapns and report counts as JSON.")
    parser.add_argument("--host", required=True, help="APNs host or address (herald-sim: 127.0.0.1)")
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--ca-file", help="extra CA to trust (herald-sim's certificate); default: the system's")
    parser.add_argument("--key-file", required=True, help="the APNs token-auth key (.p8)")
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--team-id", required=True)
    parser.add_argument("--topic", required=True, help="apns-topic (the app's bundle id)")
    parser.add_argument("--count", type=int, help="notifications to send (default 1, or every line of --requests-file)")
    parser.add_argument("--concurrency", type=int, default=1, help="notifications in flight at once (default 1)")
    parser.add_argument("--connections", type=int, default=10, help="aioapns max_connections (its default: 10)")
    parser.add_argument("--warmup", type=int, default=0, help="notifications sent first and not counted")
    parser.add_argument("--tokens", help="comma-separated device tokens, used in turn; default: a random "
                                         "32-byte token per notification")
    parser.add_argument("--push-type", default="alert",
                        help="apns-push-type, or 'none' to send no such header (aioapns' default)")
    parser.add_argument("--priority", type=int, help="apns-priority (aioapns sends none by default)")
    parser.add_argument("--ttl", type=int, help="seconds: aioapns sends apns-expiration = now + ttl")
    parser.add_argument("--collapse-id", help="apns-collapse-id")
    parser.add_argument("--message", type=json.loads,
                        help="the payload as JSON, sent as given (default: an alert numbered per notification)")
    parser.add_argument("--requests-file",
                        help="one notification a line: device token, TAB, id, TAB, payload JSON; the id goes out as "
                             "apns-id and apns-collapse-id (as Herald's worker sends them), the payload as the "
                             "message; used in turn (bench/compare gives each process its half of the deliveries)")
    parser.add_argument("--details", action="store_true", help="add every notification's id, token, status, reason")
    parser.add_argument("--allow-failures", action="store_true", help="exit 0 even if some were not 200")
    arguments = parser.parse_args(argv)
    if arguments.requests_file and (arguments.tokens or arguments.message is not None):
        parser.error("--requests-file names the tokens and payloads: not with --tokens or --message")
    if arguments.count is None:
        arguments.count = None if arguments.requests_file else 1
    if ((arguments.count is not None and arguments.count < 0) or arguments.concurrency < 1
            or arguments.connections < 1 or arguments.warmup < 0):
        parser.error("--count and --warmup must be 0 or more, --concurrency and --connections at least 1")
    return arguments


def make_client(arguments):
    """An aioapns client aimed at host:port, trusting --ca-file. Must be called inside the running loop."""
    context = ssl.create_default_context(cafile=arguments.ca_file)
    with open(arguments.key_file, encoding="ascii") as key_file:
        key = key_file.read()
    client = APNs(key=key, key_id=arguments.key_id, team_id=arguments.team_id, topic=arguments.topic,
                  max_connections=arguments.connections, ssl_context=context, use_sandbox=False)

    # The only redirection: where the pool connects (and what aioapns writes in the host header).
    class Redirected(APNsProductionClientProtocol):
        APNS_SERVER = arguments.host
        APNS_PORT = arguments.port

    client.pool.protocol_class = Redirected
    return client


async def run(arguments):
    tokens = arguments.tokens.split(",") if arguments.tokens else None
    # Parsed before the clock starts: a caller of aioapns hands it a dict, so the JSON is decoded
    # here once and encoded by aioapns per request (json.dumps, which adds a space after each
    # separator: a few bytes more than the line's own text).
    prepared = None
    if arguments.requests_file:
        prepared = []
        with open(arguments.requests_file, encoding="utf-8") as lines:
            for line in lines:
                token, identifier, payload = line.rstrip("\n").split("\t", 2)
                prepared.append((token, identifier, json.loads(payload)))
        if not prepared:
            raise SystemExit("bench/aioapns_send.py: --requests-file is empty")
        if arguments.count is None:
            arguments.count = len(prepared) - arguments.warmup
            if arguments.count < 0:
                raise SystemExit("bench/aioapns_send.py: --warmup is larger than --requests-file")
    push_type = None if arguments.push_type == "none" else PushType(arguments.push_type)
    client = make_client(arguments)
    gate = asyncio.Semaphore(arguments.concurrency)

    def request(index):
        if prepared is not None:
            token, identifier, message = prepared[index % len(prepared)]
            return NotificationRequest(device_token=token, message=message, notification_id=identifier,
                                       push_type=push_type, priority=arguments.priority,
                                       time_to_live=arguments.ttl, collapse_key=identifier)
        token = tokens[index % len(tokens)] if tokens else secrets.token_hex(32)
        message = arguments.message
        if message is None:
            message = {"aps": {"alert": {"title": "aioapns", "body": f"notification {index}"}}}
        return NotificationRequest(device_token=token, message=message, push_type=push_type,
                                   priority=arguments.priority, time_to_live=arguments.ttl,
                                   collapse_key=arguments.collapse_id)

    async def send(notification):
        async with gate:
            try:
                result = await client.send_notification(notification)
                return notification, result.status, result.description
            except Exception as error:  # aioapns raises on connection failures after its own retries
                return notification, None, f"{type(error).__name__}: {error}"

    if arguments.warmup:
        await asyncio.gather(*(send(request(index)) for index in range(arguments.warmup)))
    started_at = time.time()
    started = time.perf_counter()
    outcomes = await asyncio.gather(*(send(request(arguments.warmup + index)) for index in range(arguments.count)))
    seconds = time.perf_counter() - started
    finished_at = started_at + seconds
    client.pool.close()

    statuses, reasons, results = {}, {}, []
    for notification, status, reason in outcomes:
        key = status or "none"
        statuses[key] = statuses.get(key, 0) + 1
        if reason:
            reasons[reason] = reasons.get(reason, 0) + 1
        results.append({"id": notification.notification_id, "token": notification.device_token,
                        "status": int(status) if status else None, "reason": reason})
    sent = statuses.get("200", 0)
    report = {
        "client": "aioapns", "version": metadata.version("aioapns"),
        "sent": sent, "failed": len(outcomes) - sent, "seconds": round(seconds, 6),
        "requestsPerSecond": round(len(outcomes) / seconds, 1) if seconds > 0 else None,
        "startedAt": round(started_at, 6), "finishedAt": round(finished_at, 6),
        "concurrency": arguments.concurrency, "connections": arguments.connections,
        "statuses": statuses, "reasons": reasons,
    }
    if arguments.details:
        report["results"] = results
    return report


def main(argv):
    arguments = parse_arguments(argv)
    report = asyncio.run(run(arguments))
    print(json.dumps(report), flush=True)
    return 0 if report["failed"] == 0 or arguments.allow_failures else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
