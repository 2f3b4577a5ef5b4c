#!/usr/bin/env python3
"""Reference verifier of Herald's signed envelope (docs/api-host.md, "Verifying `sig2`"), standard library only.

Usage: verify_envelope.py --keys kid:base64key[,kid:base64key] --user USER_ID [--now UNIX] [payload.json]
The payload is an APNs body (an object with "aps"), an FCM message ({"message": {"data": ...}} or {"data": ...})
or an FCM data map. Prints "v1 ok" / "v2 ok" or the reason, and exits 0 only when both verify.
"""
import argparse
import base64
import hashlib
import hmac
import json
import sys
import time

UNSIGNED_V2 = {'kid', 'sig', 'sig2'}


def esc(text):
    """A JSON string as Herald writes it (RFC 8785): only '"', '\\' and C0 escaped."""
    return json.dumps(text, ensure_ascii=False)


def b64url(mac):
    return base64.urlsafe_b64encode(mac).rstrip(b'=').decode()


def leaves(obj, path=()):
    """(path, value) of every scalar in obj, values as strings; None if obj holds an array, null or a fraction."""
    out = []
    for key, value in obj.items():
        if not path and key in UNSIGNED_V2:
            continue
        here = path + (key,)
        if isinstance(value, bool):
            out.append((here, 'true' if value else 'false'))
        elif isinstance(value, str):
            out.append((here, value))
        elif isinstance(value, int):
            out.append((here, str(value)))
        elif isinstance(value, dict):
            inner = leaves(value, here)
            if inner is None:
                return None
            out.extend(inner)
        else:
            return None
    return out


def v2_message(payload, user_id):
    found = leaves(payload)
    if found is None:
        return None
    lines = sorted(('[' + ','.join(esc(part) for part in path + (value,)) + ']').encode() for path, value in found)
    return b'herald-envelope-v2\n' + esc(user_id).encode() + b'\n' + b'\n'.join(lines)


def verify_v2(payload, user_id, now, keys):
    """None when sig2 verifies for user_id at now, else why not."""
    kid, sig2, exp = payload.get('kid'), payload.get('sig2'), payload.get('exp')
    if not isinstance(sig2, str) or not isinstance(exp, str) or not exp.isdigit():
        return 'malformed'
    if kid not in keys:
        return 'unknown kid'
    message = v2_message(payload, user_id)
    if message is None:
        return 'malformed'
    if not hmac.compare_digest(b64url(hmac.new(keys[kid], message, hashlib.sha256).digest()), sig2):
        return 'bad signature'
    return 'expired' if now > int(exp) else None


def v1_fields(payload):
    """v1's signed fields: APNs' alert title and body plus every key beside aps; FCM's data as it is."""
    if 'aps' in payload:
        alert = payload['aps'].get('alert', {})
        fields = {'title': alert.get('title'), 'body': alert.get('body')}
        for key, value in payload.items():
            if key not in ('aps', 'kid', 'sig'):
                fields[key] = ('true' if value else 'false') if isinstance(value, bool) else value
        return fields
    return {key: value for key, value in payload.items() if key not in ('kid', 'sig')}


def verify_v1(payload, keys):
    kid, sig = payload.get('kid'), payload.get('sig')
    if kid not in keys or not isinstance(sig, str):
        return 'unknown kid' if kid not in keys else 'malformed'
    items = sorted(v1_fields(payload).items(), key=lambda kv: kv[0].encode('utf-16-be'))
    canonical = ('{' + ','.join(esc(k) + ':' + esc(v) for k, v in items) + '}').encode()
    good = hmac.compare_digest(b64url(hmac.new(keys[kid], canonical, hashlib.sha256).digest()), sig)
    return None if good else 'bad signature'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--keys', required=True, help='kid:base64key[,kid:base64key] (HERALD_SIGNING_KEYS)')
    parser.add_argument('--user', required=True, help="the recipient's userId, as the host app knows it")
    parser.add_argument('--now', type=int, default=int(time.time()), help='unix seconds (default: now)')
    parser.add_argument('payload', nargs='?', help='the payload file (default: standard input)')
    args = parser.parse_args()
    keys = {kid: base64.b64decode(key) for kid, key in (entry.split(':', 1) for entry in args.keys.split(','))}
    if args.payload:
        with open(args.payload, encoding='utf-8') as file:
            payload = json.load(file)
    else:
        payload = json.load(sys.stdin)
    payload = payload.get('message', payload)
    if 'aps' not in payload and isinstance(payload.get('data'), dict):
        payload = payload['data']
    v1, v2 = verify_v1(payload, keys), verify_v2(payload, args.user, args.now, keys)
    print('v1 ' + (v1 or 'ok'))
    print('v2 ' + (v2 or 'ok'))
    return 0 if v1 is None and v2 is None else 1


if __name__ == '__main__':
    sys.exit(main())
