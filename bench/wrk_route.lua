-- wrk's script for bench/bench_server.py: POST /v1/route with the bodies of a file (one JSON
-- body a line), each connection's thread starting at its own offset, and the figures printed
-- as one JSON line at the end (requests, seconds, p50 and p99 in µs, failed answers).
local counter = 0
local threads = {}

function setup(thread)
  thread:set("offset", counter * 97)
  counter = counter + 1
  table.insert(threads, thread)
end

local bodies = {}
local at = 0

function init(args)
  for line in io.lines(args[1]) do
    bodies[#bodies + 1] = line
  end
  at = offset or 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  at = at % #bodies + 1
  return wrk.format(nil, "/v1/route", nil, bodies[at])
end

function done(summary, latency, requests)
  local errors = summary.errors
  local failed = errors.connect + errors.read + errors.write + errors.status + errors.timeout
  io.write(string.format(
    '{"requests": %d, "seconds": %.6f, "p50_us": %d, "p99_us": %d, "failed": %d}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50), latency:percentile(99),
    failed))
end
