-- wrk's report for scripts/http-load.sh: one line with the requests, the run's length and
-- the latency percentiles (microseconds) it needs, including p99.9 (wrk's own table stops at
-- p99).
done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.status + summary.errors.timeout
  io.write(string.format(
    "RESULT requests=%d duration_us=%d p50=%d p99=%d p999=%d errors=%d\n",
    summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), errors))
end
