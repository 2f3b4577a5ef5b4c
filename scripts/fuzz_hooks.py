"""Schemathesis hooks for scripts/fuzz (loaded through SCHEMATHESIS_HOOKS).

Every generated push, Live Activity start, update and end gets a fresh Idempotency-Key.
Hypothesis reuses short strings ("0", "a") across cases, and the same key with another body is a
legitimate 422 idempotency_key_reused (docs/api.md, "Idempotency"); a fresh key lets each case be
judged on its own body. A key the generator made invalid on purpose (a negative case on that
header) is left as it is, so the rejection of bad keys is still exercised.

Live Activities need state the generator cannot invent (docs/api-live-activities.md):

- A start succeeds only for a user of the partner's tenant with an in-app session and a device
  that can show an activity. scripts/fuzz registers one (HERALD_FUZZ_RECIPIENT); a positive
  start gets it as its recipient, so the rest of the body is judged by the server's answer
  instead of an always-404 lookup. Negative starts keep what was generated.
- An update, end, read (of the activity or of its events) or host token report needs an activity
  that exists now. A random UUID only ever reads 404, so, outside the stateful phase (whose links
  already carry the id a start answered), a case whose activityId is a well-formed UUID gets the id
  of an activity started just before it, for one of HERALD_FUZZ_POOL (users that are never start
  recipients, so no other case replaces the activity first). Its template is the one whose keys the case's state
  patch names, when they all belong to one (a patch that mixes templates is a documented 422
  invalid_state for any activity); otherwise the three templates take turns. Every eighth such case keeps its random id, so the 404
  path stays exercised. A token report also gets the device the activity runs on ("iphone", or
  "pixel" every third time: 409 not_ios_device). Malformed ids (negative cases) are left alone.
  Should the start fail (the key was rotated: see below), the case keeps its generated id.

Broadcast channels are the same: an update, end, read or start from a channel needs a channel that
exists. Outside the stateful phase a case whose channelId is a well-formed UUID gets, in seven cases
out of eight, a channel opened just before it, of the template its state patch names (as for
activities). No worker runs, so the channel stays "opening": its updates, end and read are judged in
full, and a start from it answers the documented 409 channel_opening. scripts/fuzz raises
HERALD_LA_OPEN_CHANNELS_PER_MINI_APP so the mini-app's cap does not end the write path.

The partner API is fuzzed with one partner's key. Schemathesis reuses ids from responses, so the
admin cases would soon rotate, revoke or re-limit that very partner (its id is in the list), and
every later partner case would read 401 or 429 without judging anything. An admin case that
names that partner's id gets the id of a spare partner instead (HERALD_FUZZ_SPARE_PARTNER_ID),
which it may change, rotate and revoke as it likes.

A push's `category` must be one the host build registers (HERALD_NOTIFICATION_CATEGORIES), which the
schema cannot list: any other string is a documented 400 unknown_category. A positive push naming a
category gets one of HERALD_FUZZ_CATEGORIES in turn, so the rest of its body is judged; negative cases
keep what was generated, so the refusals are still exercised.

Reminders (host API) are for a user that exists, of a mini-app with a partner, at a time within the
next 7 days: a random user id only ever reads 404 and a random date 422. A positive schedule is
for the registered user (HERALD_FUZZ_RECIPIENT_ID) and mini-app (HERALD_FUZZ_MINI_APP), due within
the hour in three cases out of four (the fourth keeps its generated `at`), so the write path and
the 201 body are judged; a positive list reads that user's reminders every other time; a cancel
whose reminderId is a well-formed UUID gets, in seven cases out of eight, a reminder scheduled just
before it (and that user). scripts/fuzz raises HERALD_REMINDER_MAX_PENDING so the cap does not
end the write path after 20 cases.
"""

import itertools
import json
import os
import threading
import urllib.error
import urllib.request
import uuid
from datetime import datetime, timedelta, timezone

import schemathesis

PUSH_PATH = "/api/partners/notifications/push"
ACTIVITIES = "/api/partners/live-activities"
ACTIVITY = ACTIVITIES + "/{activityId}"
ACTIVITY_UPDATE = ACTIVITY + "/update"
ACTIVITY_EVENTS = ACTIVITY + "/events"
ACTIVITY_TOKEN = "/api/internal/live-activities/{activityId}/push-tokens/{deviceId}"
PARTNER_ADMIN = "/api/admin/mini-app-partners/{id}"
REMINDERS = "/api/internal/users/{userId}/reminders"
REMINDER = REMINDERS + "/{reminderId}"
CHANNELS = ACTIVITIES + "/channels"
CHANNEL = CHANNELS + "/{channelId}"
CHANNEL_UPDATE = CHANNEL + "/update"
CHANNEL_STARTS = CHANNEL + "/starts"

KEYED = {("POST", PUSH_PATH), ("POST", ACTIVITIES), ("POST", ACTIVITY_UPDATE), ("PATCH", ACTIVITY), ("DELETE", ACTIVITY),
         ("POST", CHANNELS), ("POST", CHANNEL_UPDATE), ("DELETE", CHANNEL), ("POST", CHANNEL_STARTS)}

# One state per template, valid at start, so a fresh activity of each exists to patch.
START_STATES = [
    ("progress", {"stages": ["Confirming", "Processing", "Completed"], "currentStage": 0, "progress": 0.2}),
    ("status", {"statusLabel": "Pending review", "statusVariant": "pending"}),
    ("countdown", {"deadline": "2030-01-01T00:00:00Z"}),
]

_counter = itertools.count()
_lock = threading.Lock()


def _valid_key(value):
    return isinstance(value, str) and 1 <= len(value) <= 255 and all(0x20 <= ord(c) <= 0x7E for c in value)


def _is_uuid(value):
    try:
        return isinstance(value, str) and len(value) == 36 and uuid.UUID(value) is not None
    except ValueError:
        return False


def _is_external_id(value):
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-")
    return isinstance(value, str) and 1 <= len(value) <= 128 and set(value) <= allowed


def _mode(case):
    meta = getattr(case, "meta", None)
    generation = getattr(meta, "generation", None)
    return str(getattr(generation, "mode", ""))


def _phase(case):
    meta = getattr(case, "meta", None)
    phase = getattr(meta, "phase", None)
    return str(getattr(phase, "name", ""))


TEMPLATE_KEYS = {
    "progress": {"stages", "currentStage", "progress", "statusText"},
    "status": {"statusLabel", "statusVariant", "footnote"},
    "countdown": {"deadline", "footnote"},
}


def _template_for(case, index):
    """The START_STATES entry whose template has every key of the case's state patch, else a turn."""
    body = case.body if isinstance(case.body, dict) else {}
    patch = body.get("state")
    if isinstance(patch, dict) and patch:
        fits = [i for i, (name, _) in enumerate(START_STATES) if set(patch) <= TEMPLATE_KEYS[name]]
        if fits:
            return START_STATES[fits[index % len(fits)]]
    return START_STATES[index % len(START_STATES)]


def _post_for_id(path, token, body, field):
    """POSTs `body` as JSON with `token` and returns the answer's `field`; None when it was refused."""
    request = urllib.request.Request(
        os.environ["HERALD_FUZZ_BASE_URL"] + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)[field]
    except urllib.error.HTTPError:
        return None


def _fresh_activity(case, index):
    """Starts an activity for a pool user through the partner API and returns its id."""
    pool = os.environ["HERALD_FUZZ_POOL"].split(",")
    template, state = _template_for(case, index)
    body = {
        "recipient": {"email": pool[index % len(pool)]},
        "template": template,
        "attributes": {"title": "Fuzz " + template},
        "state": state,
    }
    return _post_for_id(ACTIVITIES, os.environ["HERALD_FUZZ_PARTNER_KEY"], body, "activityId")


def _fresh_channel(case, index):
    """Opens a broadcast channel through the partner API and returns its id."""
    template, state = _template_for(case, index)
    body = {"template": template, "attributes": {"title": "Fuzz channel " + template}, "state": state}
    return _post_for_id(CHANNELS, os.environ["HERALD_FUZZ_PARTNER_KEY"], body, "channelId")


def _channel_case(case):
    """Points a channel case at a channel that exists (module docstring); True when it was one."""
    path = case.operation.path
    if path not in (CHANNEL, CHANNEL_UPDATE, CHANNEL_STARTS):
        return False
    if path == CHANNEL_STARTS and _mode(case) == "positive" and isinstance(case.body, dict):
        case.body["recipient"] = {"email": os.environ["HERALD_FUZZ_RECIPIENT"]}
    parameters = case.path_parameters if case.path_parameters is not None else {}
    if _phase(case) == "stateful" or not _is_uuid(parameters.get("channelId")):
        return True
    with _lock:
        index = next(_counter)
    if index % 8 == 7:
        return True
    fresh = _fresh_channel(case, index)
    if fresh is not None:
        parameters["channelId"] = fresh
        case.path_parameters = parameters
    return True


def _soon(index):
    """An RFC 3339 time within the next hour."""
    return (datetime.now(timezone.utc) + timedelta(seconds=60 + (index * 37) % 3500)).isoformat()


def _fresh_reminder(index):
    """Schedules a reminder for the registered user through the host API and returns its id."""
    user = os.environ["HERALD_FUZZ_RECIPIENT_ID"]
    body = {"miniAppId": os.environ["HERALD_FUZZ_MINI_APP"], "title": "Fuzz reminder", "at": _soon(index)}
    return _post_for_id(REMINDERS.replace("{userId}", user), os.environ["HERALD_FUZZ_HOST_TOKEN"], body, "reminderId")


def _reminder_case(case):
    """Points a reminder case at state that exists (module docstring); True when it was one."""
    method = case.method.upper()
    path = case.operation.path
    if path not in (REMINDERS, REMINDER) or _phase(case) == "stateful":
        return path in (REMINDERS, REMINDER)
    with _lock:
        index = next(_counter)
    parameters = dict(case.path_parameters or {})
    user = os.environ["HERALD_FUZZ_RECIPIENT_ID"]
    if path == REMINDERS and _mode(case) == "positive":
        if method == "POST" and isinstance(case.body, dict):
            parameters["userId"] = user
            case.body["miniAppId"] = os.environ["HERALD_FUZZ_MINI_APP"]
            if index % 4 != 3:
                case.body["at"] = _soon(index)
        elif method == "GET" and index % 2 == 0:
            parameters["userId"] = user
    elif path == REMINDER and _is_uuid(parameters.get("reminderId")) and index % 8 != 7:
        fresh = _fresh_reminder(index)
        if fresh is not None:
            parameters["userId"] = user
            parameters["reminderId"] = fresh
    if parameters != (case.path_parameters or {}):
        case.path_parameters = parameters
    return True


def _set_header_key(case):
    headers = case.headers if case.headers is not None else {}
    current = next((v for k, v in headers.items() if k.lower() == "idempotency-key"), None)
    if current is not None and not _valid_key(current):
        return
    for name in [k for k in headers if k.lower() == "idempotency-key"]:
        del headers[name]
    headers["Idempotency-Key"] = "fuzz-" + uuid.uuid4().hex
    case.headers = headers


@schemathesis.hook
def before_call(context, case, kwargs):
    method = case.method.upper()
    path = case.operation.path
    if (method, path) in KEYED:
        _set_header_key(case)

    if _reminder_case(case) or _channel_case(case):
        return

    if method == "POST" and path == PUSH_PATH:
        body = case.body
        if _mode(case) == "positive" and isinstance(body, dict) and isinstance(body.get("category"), str):
            categories = os.environ["HERALD_FUZZ_CATEGORIES"].split(",")
            with _lock:
                index = next(_counter)
            body["category"] = categories[index % len(categories)]
        return

    if path.startswith(PARTNER_ADMIN) and case.path_parameters:
        own = os.environ["HERALD_FUZZ_PARTNER_ID"]
        if str(case.path_parameters.get("id", "")).lower() == own:
            case.path_parameters = {**case.path_parameters, "id": os.environ["HERALD_FUZZ_SPARE_PARTNER_ID"]}
        return

    if method == "POST" and path == ACTIVITIES and _mode(case) == "positive" and isinstance(case.body, dict):
        case.body["recipient"] = {"email": os.environ["HERALD_FUZZ_RECIPIENT"]}
        return

    if path not in (ACTIVITY, ACTIVITY_UPDATE, ACTIVITY_EVENTS, ACTIVITY_TOKEN) or _phase(case) == "stateful":
        return
    parameters = case.path_parameters if case.path_parameters is not None else {}
    if not _is_uuid(parameters.get("activityId")):
        return
    with _lock:
        index = next(_counter)
    if index % 8 == 7:
        return
    fresh = _fresh_activity(case, index)
    if fresh is None:
        return
    parameters["activityId"] = fresh
    if path == ACTIVITY_TOKEN and _is_external_id(parameters.get("deviceId")):
        parameters["deviceId"] = "pixel" if index % 3 == 2 else "iphone"
    case.path_parameters = parameters
