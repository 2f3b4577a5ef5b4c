#!/usr/bin/env python3
"""SQL for bench/statements: what one piece of a single push's Postgres work needs set up, and N calls of it.

    statement_calls.py PIECE N SEED setup|calls

PIECE is one of
  intake    herald_intake_push for one push to one user with one iPhone (the intake's write), its delivery leased
            to the worker it notifies (a registered listener's lease, as the intake writes under one), the
            notification carrying it whole;
  read      the worker's read of that delivery by id, as for rows too large to carry (Queries.Deliveries.readLeased,
            read from Sources/Store/Queries/deliveries.sql, with the session settings it runs under);
  claim     the worker's listed claim of such a push's delivery written without a lease
            (Queries.Deliveries.claimListed: an intake whose list of listeners is stale, an older worker);
  batch     herald_intake_push for 16 such pushes at once (the intake's group commit under load), per call;
  complete  herald_complete_deliveries for six sent deliveries of six pushes (a worker's completion at 250/s;
            BENCH_COMPLETE_ROWS sets another count: about 60 at 2,000/s);
  ceiling   the minimal queue of bench/single-push-ceiling.sql: one row enqueued, then claimed and done.
"setup" prints what runs before the count (through psql, uncounted); "calls" prints the N counted statements
for a single-user backend (postgres --single -j: each statement ends with a blank line). The same SEED gives
the same ids to both.
"""
import os
import pathlib
import random
import re
import sys
import uuid

ROOT = pathlib.Path(__file__).resolve().parent.parent
PARTNER = "00000000-0000-4000-8000-000000000001"
USERS = 10000
COMPLETE_ROWS = int(os.environ.get("BENCH_COMPLETE_ROWS", "6"))
APNS = ('{"aps":{"alert":{"title":"[Pull] Deposit pending","body":"Confirmations: 1/6"},"mutable-content":1},'
        '"channel":"miniapp","miniAppId":"fun.pull.gacha","deliveryId":"%s","kid":"k1","sig":"%s"}')
FCM = ('{"android":{"priority":"HIGH"},"data":{"title":"[Pull] Deposit pending","body":"Confirmations: 1/6",'
       '"channel":"miniapp","miniAppId":"fun.pull.gacha","deliveryId":"%s","kid":"k1","sig":"%s"}}')


def query_blocks(file):
    """The `-- name:` and `-- fragment:` blocks of Sources/Store/Queries/FILE.sql, as Sources/embed-queries reads
    them: the comment lines right below the opening line are documentation; the text runs to the next block."""
    blocks = {}
    current = None
    for line in (ROOT / "Sources/Store/Queries" / (file + ".sql")).read_text().split("\n"):
        opening = re.match(r"-- (name|fragment): (\w+)\s*$", line.strip())
        if opening:
            current = blocks.setdefault(opening.group(2), [])
        elif current is not None and (current or not line.strip().startswith("--")):
            current.append(line)
    return {name: "\n".join(lines).strip() for name, lines in blocks.items()}


def named_sql(file, name):
    """Query `name` of Sources/Store/Queries/FILE.sql as Postgres receives it: its fragments (`{{name}}`, or
    `{{file.name}}` of another file) in place, a closing semicolon dropped."""

    def expand(text, file):
        def fragment(match):
            other = match.group(1) or file
            return expand(query_blocks(other)[match.group(2)], other)

        return re.sub(r"\{\{(?:(\w+)\.)?(\w+)\}\}", fragment, text)

    return expand(query_blocks(file)[name], file).rstrip(";")


class Ids:
    def __init__(self, seed):
        self.random = random.Random(seed)

    def uuid(self):
        return str(uuid.UUID(int=self.random.getrandbits(128), version=4))

    def iphone_user(self):
        # Every 5th user also has a Pixel (bench/statements' fixture, as bench/delivery's): not those.
        while True:
            g = self.random.randint(1, USERS)
            if g % 5:
                return g


INTAKE_PREPARE = """PREPARE push (uuid[], int[], int[], text[], text[], timestamptz[], text[], text[], uuid[],
    timestamptz[], text[], text[], text[], text[], timestamptz[], int[], int[], text[], text[], int[],
    text[], text[], int[], uuid[], text[], text[], text[], text, text, int, int) AS
SELECT * FROM herald_intake_push($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
    $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31);
"""
# The worker the counted intake calls lease their deliveries to, registered as its listener would (pid 1).
LEASE = "'bench-worker', 30, 1"
REGISTER = ("INSERT INTO worker_listeners (pid, worker_id, lease_seconds) VALUES (1, 'bench-worker', 30)\n"
            " ON CONFLICT (pid) DO NOTHING;\n")


def intake_call(ids, size, verb="SELECT * FROM herald_intake_push", notify="NULL", lease="NULL, NULL, NULL"):
    """`size` one-device pushes in one call, each with one e-mail and two slots rendered for its user: the intake's
    arguments (IntakeWriter.parameters). The counted calls notify a worker's channel (nobody listens) under its lease,
    as the intake's do. Returns the statement and each push's delivery (its first slot)."""
    sig = "Z-LlH3Oh6AsQw_m468z-bUFzbhBslsAVMCOoTEOLjdE"
    def literal(values, kind):
        # An array literal, parsed by array_in as the intake's bound parameters are (None: NULL).
        def element(v):
            return "NULL" if v is None else '"%s"' % str(v).replace("\\", "\\\\").replace('"', '\\"')
        return "'{%s}'::%s[]" % (",".join(element(v) for v in values).replace("'", "''"), kind)
    def repeat(value, kind):
        return literal([value] * size, kind)
    def times(expression):
        return "ARRAY[%s]::timestamptz[]" % ", ".join([expression] * size)
    users = [ids.iphone_user() for _ in range(size)]
    slots = [ids.uuid() for _ in range(2 * size)]
    args = [
        repeat(PARTNER, "uuid"), repeat(1000000, "int"), repeat(100000000, "int"), repeat("bench", "text"),
        repeat("fun.pull.gacha", "text"), times("now()"), repeat(None, "text"), repeat(None, "text"),
        literal([ids.uuid() for _ in range(size)], "uuid"), times("now()"), repeat("[Pull] Deposit pending", "text"),
        repeat("Confirmations: 1/6", "text"), repeat(None, "text"), repeat("{}", "text"), repeat(None, "timestamptz"),
        repeat(86400, "int"), literal(range(1, size + 1), "int"),
        literal([f"user{u}@bench.example" for u in users], "text"),
        literal([f'"user{u}@bench.example"' for u in users], "text"), repeat(0, "int"), "'{}'::text[]", "'{}'::text[]",
        literal(range(2, 2 * size + 1, 2), "int"), literal(slots, "uuid"),
        literal([APNS % (d, sig) for d in slots], "text"), literal([FCM % (d, sig) for d in slots], "text"),
        literal([f"u{u}" for u in users for _ in range(2)], "text"), notify, lease,
    ]
    return f"{verb}(" + ",\n ".join(args) + ");\n", slots[::2]


def pieces(piece, n, ids):
    setup, calls = [], []
    if piece == "intake":
        setup.append(REGISTER)
        calls.append(INTAKE_PREPARE)
        for _ in range(n):
            calls.append(intake_call(ids, 1, verb="EXECUTE push", notify="'herald_worker_bench'", lease=LEASE)[0])
    elif piece == "batch":
        setup.append(REGISTER)
        calls.append(INTAKE_PREPARE)
        for _ in range(n):
            calls.append(intake_call(ids, 16, verb="EXECUTE push", notify="'herald_worker_bench'", lease=LEASE)[0])
    elif piece == "read":
        setup.append(REGISTER)
        calls.append(named_sql("worker_sessions", "claimSession") + ";\n")
        calls.append("PREPARE readleased (text, uuid[]) AS\n" + named_sql("deliveries", "readLeased") + ";\n")
        for _ in range(n):
            statement, (delivery,) = intake_call(ids, 1, notify="'herald_worker_bench'", lease=LEASE)
            setup.append(statement)
            calls.append(f"EXECUTE readleased ('bench-worker', ARRAY['{delivery}']::uuid[]);\n")
    elif piece == "claim":
        calls.append(named_sql("worker_sessions", "claimSession") + ";\n")
        calls.append("PREPARE claim (text, integer, integer, text[], uuid[], integer) AS\n"
                     + named_sql("deliveries", "claimListed") + ";\n")
        for _ in range(n):
            statement, (delivery,) = intake_call(ids, 1)
            setup.append(statement)
            calls.append(f"EXECUTE claim ('bench-worker', 200, 60, '{{apns,fcm}}', ARRAY['{delivery}']::uuid[], 0);\n")
    elif piece == "complete":
        calls.append("PREPARE complete (text, uuid[], text[], text[], text[], text[], uuid[], integer[]) AS\n"
                     "SELECT * FROM herald_complete_deliveries($1, $2, $3, $4, $5, $6, $7, $8);\n")
        for _ in range(n):
            statement, batch = intake_call(ids, COMPLETE_ROWS)
            setup.append(statement)
            quoted = ", ".join(f"'{d}'" for d in batch)
            setup.append(f"UPDATE deliveries SET state = 'leased', leased_by = 'bench-worker', attempts = 1,\n"
                         f" lease_expires_at = now() + interval '1 hour' WHERE id IN ({quoted});\n")
            empty = ", ".join("''" for _ in batch)
            calls.append(f"EXECUTE complete ('bench-worker', ARRAY[{quoted}]::uuid[],\n"
                         f" ARRAY[{', '.join(repr('sent') for _ in batch)}], ARRAY[{empty}], ARRAY[{empty}],"
                         f" ARRAY[{empty}], NULL, NULL);\n")
    elif piece == "ceiling":
        # Prepared, as pgbench -M prepared runs it: BEGIN, SET LOCAL and COMMIT stay as they are.
        script = (ROOT / "bench/single-push-ceiling.sql").read_text()
        statements = [s.strip() for s in re.sub(r"(?m)^--.*\n", "", script).split(";") if s.strip()]
        names = []
        for k, statement in enumerate(statements):
            if statement.split()[0].upper() in ("BEGIN", "SET", "COMMIT"):
                names.append(statement)
            else:
                calls.append(f"PREPARE ceiling_{k} AS\n" + statement.replace(":client_id", "1") + ";\n")
                names.append(f"EXECUTE ceiling_{k}")
        for _ in range(n):
            for name in names:
                calls.append(name + ";\n")
    else:
        sys.exit(f"statement_calls.py: unknown piece {piece}")
    return setup, calls


def main():
    piece, n, seed, part = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    setup, calls = pieces(piece, n, Ids(seed))
    sys.stdout.write("\n".join(setup if part == "setup" else calls))


if __name__ == "__main__":
    main()
