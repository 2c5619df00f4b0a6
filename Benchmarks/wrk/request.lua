-- wrk script of pass-sim.sh: the method, body and headers come from the environment; with XFF=1 every
-- request carries its own X-Forwarded-For (65,536 addresses in turn), so a throttled pass-sim sees many
-- clients each under its rate limit and the figure includes the throttle's bookkeeping.
wrk.method = os.getenv("WRK_METHOD") or "GET"
local body = os.getenv("WRK_BODY")
if body and body ~= "" then wrk.body = body end
local content_type = os.getenv("WRK_CONTENT_TYPE")
if content_type and content_type ~= "" then wrk.headers["Content-Type"] = content_type end

local xff = os.getenv("XFF") == "1"
local counter = 0

request = function()
   if not xff then
      return wrk.format()
   end
   counter = counter + 1
   local n = counter % 65536
   wrk.headers["X-Forwarded-For"] = string.format("198.18.%d.%d", math.floor(n / 256), n % 256)
   return wrk.format()
end
