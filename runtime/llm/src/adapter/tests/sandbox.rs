use super::*;
use crate::adapter::{AdapterError, Exceeded};
use std::time::Instant;

fn script(body: &str) -> Adapter {
    Adapter::load("t.lua", body).expect("test adapter loads")
}

/// An adapter whose `transform_request` runs the Lua code it is given (as text, via `load`).
fn runner(limits: AdapterLimits) -> Adapter {
    Adapter::load_with(
        "runner.lua",
        r#"return { transform_request = function(code)
             local f = assert(load(code))
             return tostring(f())
           end }"#,
        limits,
    )
    .expect("runner loads")
}

#[test]
fn forbidden_globals_are_absent() {
    watchdog(20, || {
        let a = script(
            r#"return { transform_request = function()
                 local out = {}
                 for _, n in ipairs({"io", "os", "require", "package", "debug", "dofile", "loadfile",
                                     "collectgarbage", "coroutine", "warn"}) do
                   out[#out + 1] = n .. "=" .. type(_G[n])
                 end
                 out[#out + 1] = "string.dump=" .. type(string.dump)
                 out[#out + 1] = "method.dump=" .. type(("").dump)
                 return table.concat(out, " ")
               end }"#,
        );
        assert_eq!(
            a.transform_request("").expect("runs"),
            "io=nil os=nil require=nil package=nil debug=nil dofile=nil loadfile=nil \
             collectgarbage=nil coroutine=nil warn=nil string.dump=nil method.dump=nil"
        );
        // What adapters do need is there.
        let r = runner(AdapterLimits::default());
        let present = r
            .transform_request(
                "return type(string.format) .. type(table.concat) .. type(math.floor) .. type(utf8.char) \
                 .. type(json.encode) .. type(log) .. type(pcall) .. type(load)",
            )
            .expect("runs");
        assert_eq!(
            present,
            "functionfunctionfunctionfunctionfunctionfunctionfunctionfunction"
        );
    });
}

#[test]
fn bytecode_is_refused_everywhere() {
    watchdog(20, || {
        // Real bytecode, made by an unsandboxed state, which proves it would run if allowed.
        let plain = mlua::Lua::new();
        let bytecode = plain
            .load("return 40 + 2")
            .into_function()
            .expect("compiles")
            .dump(false);
        let direct: i64 = plain
            .load(&bytecode[..])
            .set_mode(mlua::chunk::ChunkMode::Binary)
            .call(())
            .expect("bytecode runs unsandboxed");
        assert_eq!(direct, 42);

        let hex: String = bytecode.iter().map(|b| format!("{b:02x}")).collect();
        let a = script(
            r#"return { transform_request = function(hex)
                 local code = hex:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)
                 local results = {}
                 for _, mode in ipairs({"b", "bt", "t"}) do
                   local f, err = load(code, "bc", mode)
                   results[#results + 1] = tostring(f) .. ":" .. tostring(err)
                 end
                 local f, err = load(code)
                 results[#results + 1] = tostring(f) .. ":" .. tostring(err)
                 local g = load("return 1 + 1")
                 local h = load("return x", "env", "b", { x = 5 })
                 results[#results + 1] = tostring(g()) .. "," .. tostring(h())
                 return table.concat(results, "|")
               end }"#,
        );
        let out = a.transform_request(&hex).expect("runs");
        let parts: Vec<&str> = out.split('|').collect();
        assert_eq!(parts.len(), 5, "{out}");
        for p in &parts[..4] {
            assert!(
                p.starts_with("nil:") && p.contains("binary chunk"),
                "bytecode must be refused: {p}"
            );
        }
        assert_eq!(
            parts[4], "2,5",
            "text chunks (with or without an environment) still load"
        );

        // Nor can an adapter file itself be bytecode.
        let err =
            Adapter::load("evil.lua", &String::from_utf8_lossy(&bytecode)).expect_err("refused");
        assert!(
            matches!(&err, AdapterError::Load { file, message } if file == "evil.lua" && message.contains("binary")),
            "{err}"
        );
    });
}

#[test]
fn infinite_loop_is_stopped_and_the_adapter_still_works() {
    watchdog(20, || {
        let a = script(
            r#"return { transform_request = function(raw)
                 if raw == "loop" then while true do end end
                 return "ok:" .. raw
               end }"#,
        );
        let started = Instant::now();
        let err = a.transform_request("loop").expect_err("stopped");
        let took = started.elapsed();
        assert!(
            took < Duration::from_millis(2500),
            "stopped within the 2 s budget (took {took:?})"
        );
        assert!(
            matches!(&err, AdapterError::Budget { adapter, function: "transform_request", exceeded }
                if adapter == "t" && matches!(exceeded, Exceeded::Instructions(50_000_000) | Exceeded::Time(_))),
            "{err:?}"
        );
        assert!(err.to_string().contains("transform_request"), "{err}");
        assert_eq!(
            a.transform_request("next").expect("usable afterwards"),
            "ok:next"
        );
    });
}

#[test]
fn wall_clock_budget_stops_slow_loops() {
    watchdog(20, || {
        let limits = AdapterLimits {
            instructions: u64::MAX,
            ..tight_limits()
        };
        let r = runner(limits);
        let started = Instant::now();
        let err = r
            .transform_request("while true do end")
            .expect_err("stopped");
        assert!(
            matches!(
                err,
                AdapterError::Budget {
                    exceeded: Exceeded::Time(_),
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(started.elapsed() < Duration::from_millis(800));
    });
}

#[test]
fn pcall_cannot_swallow_the_budget() {
    watchdog(20, || {
        let r = runner(tight_limits());
        for code in [
            "while true do pcall(function() while true do end end) end",
            "while true do xpcall(function() while true do end end, function() while true do end end) end",
            "local n = 0 while true do local ok = pcall(error, 'x') n = n + 1 end",
        ] {
            let started = Instant::now();
            let err = r.transform_request(code).expect_err("stopped");
            assert!(
                matches!(err, AdapterError::Budget { .. }),
                "{code}: {err:?}"
            );
            assert!(started.elapsed() < Duration::from_secs(2), "{code}");
        }
        assert_eq!(
            r.transform_request("return 'alive'").expect("usable"),
            "alive"
        );
    });
}

#[test]
fn huge_allocations_hit_the_memory_limit() {
    watchdog(20, || {
        let r = runner(AdapterLimits::default());
        for code in [
            r#"return #string.rep("x", 2e9)"#,
            r#"local s = "x" while true do s = s .. s end"#,
            r#"local t = {} for i = 1, 1e8 do t[i] = i end return #t"#,
        ] {
            let err = r.transform_request(code).expect_err("refused");
            assert!(
                matches!(&err, AdapterError::Memory { limit_bytes, function: "transform_request", .. } if *limit_bytes == 32 << 20),
                "{code}: {err:?}"
            );
        }
        assert_eq!(
            r.transform_request("return #string.rep('x', 1000)")
                .expect("usable"),
            "1000"
        );
    });
}

#[test]
fn deep_recursion_is_an_error() {
    watchdog(20, || {
        let r = runner(AdapterLimits::default());
        for code in [
            "local function f(n) return f(n + 1) + 1 end return f(1)",
            "local t = setmetatable({}, {__index = function(t, k) return t[k .. 'x'] end}) return t.a",
        ] {
            let err = r.transform_request(code).expect_err("overflows");
            assert!(
                matches!(
                    err,
                    AdapterError::Script { .. } | AdapterError::Memory { .. }
                ),
                "{code}: {err:?}"
            );
        }
        assert_eq!(r.transform_request("return 7").expect("usable"), "7");
    });
}

#[test]
fn syntax_error_is_a_load_error_naming_the_file() {
    watchdog(20, || {
        let err = Adapter::load(
            "broken.lua",
            "return {\n  transform_request = function(x)\n",
        )
        .expect_err("syntax");
        let AdapterError::Load { file, message } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(file, "broken.lua");
        assert!(
            message.contains("broken.lua:"),
            "the message points into the file: {message}"
        );
        assert!(err.to_string().contains("broken.lua"));
    });
}

#[test]
fn bad_chunks_are_load_errors() {
    watchdog(20, || {
        for (src, needle) in [
            ("return 42", "must return the adapter table"),
            ("return { name = 'x' }", "transform_request"),
            (
                "return { transform_request = 'nope' }",
                "transform_request` must be a function",
            ),
            (
                "return { transform_request = function() end, headers = 3 }",
                "headers",
            ),
            (
                "return { transform_request = function() end, stream_format = 'xml' }",
                "stream_format",
            ),
            ("error('refusing to load')", "refusing to load"),
            ("while true do end", "budget"),
            (
                "local s = 'x' while true do s = s .. s end",
                "out of memory",
            ),
        ] {
            let err = Adapter::load_with("bad.lua", src, tight_limits()).expect_err(src);
            assert!(
                matches!(&err, AdapterError::Load { file, message } if file == "bad.lua" && message.contains(needle)),
                "{src}: {err:?}"
            );
        }
    });
}

#[test]
fn gc_metamethods_are_refused() {
    watchdog(20, || {
        let r = runner(AdapterLimits::default());
        let err = r
            .transform_request(
                "setmetatable({}, {__gc = function() while true do end end}) return 1",
            )
            .expect_err("refused");
        assert!(err.to_string().contains("__gc"), "{err}");
        assert_eq!(
            r.transform_request("return getmetatable(setmetatable({}, {__index = {}})) ~= nil")
                .expect("ok"),
            "true"
        );
    });
}

#[test]
fn script_errors_name_adapter_and_function() {
    watchdog(20, || {
        let a = script(
            r#"return { name = "custom", transform_request = function(x) return x end,
                        transform_response = function() error("boom") end,
                        transform_stream_chunk = function() return 42 end }"#,
        );
        let err = a.transform_response("{}").expect_err("raises");
        assert!(
            matches!(&err, AdapterError::Script { adapter, function: "transform_response", message }
                if adapter == "custom" && message.contains("t.lua:") && message.contains("boom") && !message.contains("traceback")),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(
            text.contains("custom") && text.contains("transform_response") && text.contains("boom"),
            "{text}"
        );
        let err = a
            .transform_stream_chunk("x")
            .expect_err("a number is not a chunk");
        assert!(
            matches!(&err, AdapterError::Script { function: "transform_stream_chunk", message, .. } if message.contains("string")),
            "{err:?}"
        );
    });
}

#[test]
fn a_call_stuck_in_a_library_function_is_reported_hung_then_recovers() {
    watchdog(60, || {
        // A backtracking pattern runs inside C, where the instruction hook never fires. Its cost
        // grows with n^4; calibrate n so the stuck call lasts about 2.5 s on this build.
        let find = |n: usize| {
            format!(r#"return tostring(string.find(string.rep("a", {n}), ".-.-.-.-b"))"#)
        };
        let probe = runner(AdapterLimits::default());
        let started = Instant::now();
        assert_eq!(
            probe.transform_request(&find(60)).expect("short pattern"),
            "nil"
        );
        let t60 = started.elapsed().as_secs_f64().max(1e-4);
        let n = ((60.0 * (2.5 / t60).powf(0.25)) as usize).clamp(60, 2000);

        let r = runner(tight_limits());
        let started = Instant::now();
        let err = r.transform_request(&find(n)).expect_err("hung");
        let waited = started.elapsed();
        assert!(
            matches!(
                err,
                AdapterError::Hung {
                    function: "transform_request",
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(
            waited < Duration::from_millis(1500),
            "the caller got control back after {waited:?}"
        );
        let err = r.transform_request("return 1").expect_err("still busy");
        assert!(
            matches!(&err, AdapterError::Broken { reason, .. } if reason.contains("still running")),
            "{err:?}"
        );
        // Once the stuck call returns, the adapter takes calls again.
        let deadline = Instant::now() + Duration::from_secs(40);
        loop {
            match r.transform_request("return 'back'") {
                Ok(v) => {
                    assert_eq!(v, "back");
                    break;
                }
                Err(AdapterError::Broken { .. }) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => panic!("{e:?}"),
            }
        }
    });
}
