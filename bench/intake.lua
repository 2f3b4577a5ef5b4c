-- wrk script for bench/intake: POST /api/partners/notifications/push, one recipient per
-- request (a random existing user's email), a unique Idempotency-Key per request, and a
-- ~300-byte body shaped like a real partner push.
--
-- Environment (set by bench/intake):
--   BENCH_API_KEY   the partner's mp_ key                       (required)
--   BENCH_USERS     users are user1..userN@bench.example         (default 5000)
--   BENCH_RUN       a tag that keeps keys unique across runs     (default "run")
--
-- Every status other than 202 is counted per thread and printed by done(); the line
-- "bench: accepted=N other=M" is what bench/intake parses.

local api_key = os.getenv("BENCH_API_KEY") or error("BENCH_API_KEY is not set")
local users = tonumber(os.getenv("BENCH_USERS") or "5000")
local run_tag = os.getenv("BENCH_RUN") or "run"

local threads = {}
local next_thread_id = 0

function setup(thread)
   next_thread_id = next_thread_id + 1
   thread:set("thread_id", next_thread_id)
   table.insert(threads, thread)
end

-- Per-thread state (each wrk thread has its own Lua state).
local counter = 0
accepted = 0
others = 0
other_statuses = ""   -- "status=count,..." built in done-time order, kept as a string for thread:get
local other_counts = {}
local headers

function init(args)
   math.randomseed(os.time() * 1000 + (thread_id or 0) * 7919)
   headers = {
      ["Authorization"] = "Bearer " .. api_key,
      ["Content-Type"] = "application/json",
   }
end

local function hex(n)
   local t = {}
   for i = 1, n do t[i] = string.format("%x", math.random(0, 15)) end
   return table.concat(t)
end

function request()
   counter = counter + 1
   local user = math.random(1, users)
   headers["Idempotency-Key"] = string.format("%s-%d-%d", run_tag, thread_id or 0, counter)
   local body = string.format(
      '{"recipients":{"emails":["user%d@bench.example"]},'
         .. '"title":"Deposit confirmed",'
         .. '"body":"0.25 ETH arrived in your Pull wallet after 6 confirmations. Tap to see it.",'
         .. '"deepLink":"basedapp://miniapp/fun.pull.gacha/deposits/0x%s",'
         .. '"data":{"txHash":"0x%s"}}',
      user, hex(12), hex(40))
   return wrk.format("POST", "/api/partners/notifications/push", headers, body)
end

function response(status, hdrs, body)
   if status == 202 then
      accepted = accepted + 1
   else
      others = others + 1
      other_counts[status] = (other_counts[status] or 0) + 1
      local parts = {}
      for s, c in pairs(other_counts) do parts[#parts + 1] = s .. "=" .. c end
      other_statuses = table.concat(parts, ",")
   end
end

function done(summary, latency, requests)
   local total_accepted, total_others = 0, 0
   local statuses = {}
   for _, t in ipairs(threads) do
      total_accepted = total_accepted + (t:get("accepted") or 0)
      total_others = total_others + (t:get("others") or 0)
      local s = t:get("other_statuses") or ""
      for status, count in string.gmatch(s, "(%d+)=(%d+)") do
         statuses[status] = (statuses[status] or 0) + tonumber(count)
      end
   end
   local parts = {}
   for s, c in pairs(statuses) do parts[#parts + 1] = s .. ":" .. c end
   table.sort(parts)
   local seconds = summary.duration / 1e6
   io.write(string.format(
      "bench: accepted=%d other=%d other_statuses=%s socket_errors=%d seconds=%.3f accepted_per_s=%.1f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f\n",
      total_accepted, total_others, (#parts > 0) and table.concat(parts, ",") or "none",
      summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
      seconds, total_accepted / seconds,
      latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
      latency.max / 1000))
end
