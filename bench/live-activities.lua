-- wrk script for bench/live-activities: POST /api/partners/live-activities/{id}/update, spread
-- round-robin over the active activities (thread t takes ids t, t+T, t+2T, ...), a partial progress
-- state with a unique statusText and a unique Idempotency-Key per request (as bench/intake.lua does
-- for pushes).
--
-- Environment (set by bench/live-activities):
--   BENCH_API_KEY   the partner's mp_ key                      (required)
--   BENCH_IDS       a file with one activity id per line       (required)
--   BENCH_THREADS   wrk's -t, to spread the ids between threads (default 2)
--   BENCH_RUN       a tag that keeps keys unique across runs   (default "run")
--   BENCH_PATH      the path before the id                     (default "/api/partners/live-activities/";
--                   "/api/partners/live-activities/channels/" updates broadcast channels)
--
-- The line "bench: accepted=N other=M ..." printed by done() is what bench/live-activities parses.

local api_key = os.getenv("BENCH_API_KEY") or error("BENCH_API_KEY is not set")
local ids_file = os.getenv("BENCH_IDS") or error("BENCH_IDS is not set")
local thread_count = tonumber(os.getenv("BENCH_THREADS") or "2")
local run_tag = os.getenv("BENCH_RUN") or "run"
local path_prefix = os.getenv("BENCH_PATH") or "/api/partners/live-activities/"

local threads = {}
local next_thread_id = 0

function setup(thread)
   thread:set("thread_id", next_thread_id)
   next_thread_id = next_thread_id + 1
   table.insert(threads, thread)
end

-- Per-thread state (each wrk thread has its own Lua state).
local ids = {}
local position = 0
local counter = 0
accepted = 0
others = 0
other_statuses = ""
local other_counts = {}
local headers

function init(args)
   local n = 0
   for line in io.lines(ids_file) do
      if n % thread_count == (thread_id or 0) then ids[#ids + 1] = line end
      n = n + 1
   end
   if #ids == 0 then error("no activity ids for thread " .. tostring(thread_id)) end
   headers = {
      ["Authorization"] = "Bearer " .. api_key,
      ["Content-Type"] = "application/json",
   }
end

function request()
   counter = counter + 1
   position = position % #ids + 1
   headers["Idempotency-Key"] = string.format("%s-%d-%d", run_tag, thread_id or 0, counter)
   local body = string.format('{"state":{"progress":%.2f,"statusText":"wrk %d-%d"}}',
      (counter % 100) / 100, thread_id or 0, counter)
   return wrk.format("POST", path_prefix .. ids[position] .. "/update", headers, body)
end

function response(status, hdrs, body)
   if status == 200 then
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
