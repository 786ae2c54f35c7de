-- tests/bench/wrk-proxy.lua: make wrk speak to an HTTP proxy.  wrk connects
-- to the URL on its command line (the proxy) and sends origin-form requests;
-- a forward proxy needs the absolute form (RFC 9112 §3.2.2) and a Host
-- header that names the same authority as the URI (RFC 9112 §3.2), which
-- postern checks (host_mismatch).  BENCH_UPSTREAM is HOST:PORT.
local up = os.getenv("BENCH_UPSTREAM")
wrk.path = "http://" .. up .. "/"
wrk.headers["Host"] = up
-- BENCH_PROXY_AUTH, when set, is a Proxy-Authorization value (a proxy that
-- wants credentials: sandbox-runtime's, in bench-sandbox.sh).
local auth = os.getenv("BENCH_PROXY_AUTH")
if auth ~= nil and auth ~= "" then
	wrk.headers["Proxy-Authorization"] = auth
end
