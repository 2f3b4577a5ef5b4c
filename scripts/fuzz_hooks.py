"""Schemathesis hooks for scripts/fuzz (loaded through SCHEMATHESIS_HOOKS).

Every generated push gets a fresh Idempotency-Key. Hypothesis reuses short strings ("0", "a")
across cases, and the same key with another body is a legitimate 422 idempotency_key_reused
(docs/api.md, "Idempotency"); a fresh key lets each case be judged on its own body. A key the
generator made invalid on purpose (a negative case on that header) is left as it is, so the
rejection of bad keys is still exercised.
"""

import uuid

import schemathesis

PUSH_PATH = "/api/partners/notifications/push"


def _valid_key(value):
    return isinstance(value, str) and 1 <= len(value) <= 255 and all(0x20 <= ord(c) <= 0x7E for c in value)


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.method.upper() != "POST" or case.operation.path != PUSH_PATH:
        return
    headers = case.headers if case.headers is not None else {}
    current = next((v for k, v in headers.items() if k.lower() == "idempotency-key"), None)
    if current is not None and not _valid_key(current):
        return
    for name in [k for k in headers if k.lower() == "idempotency-key"]:
        del headers[name]
    headers["Idempotency-Key"] = "fuzz-" + uuid.uuid4().hex
    case.headers = headers
