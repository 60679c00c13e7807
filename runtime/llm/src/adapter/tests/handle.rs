use super::*;
use crate::adapter::{AdapterError, DEFAULT_ENDPOINT, HeaderMeta, StreamFormat};
use std::sync::Arc;

#[test]
fn adapter_is_send_and_sync() {
    fn shared<T: Send + Sync + 'static>() {}
    shared::<Adapter>();
    shared::<AdapterError>();
}

#[test]
fn table_fields_and_defaults() {
    watchdog(20, || {
        let a = Adapter::load(
            "my_source.lua",
            "return { transform_request = function(x) return x end }",
        )
        .expect("loads");
        assert_eq!(
            a.name(),
            "my_source",
            "the file name names an adapter without `name`"
        );
        assert_eq!(a.file_name(), "my_source.lua");
        assert_eq!(a.endpoint(), DEFAULT_ENDPOINT);
        assert_eq!(a.stream_endpoint(), DEFAULT_ENDPOINT);
        assert_eq!(a.stream_format(), StreamFormat::Sse);
        assert_eq!(a.version(), "");
        assert!(a.static_headers().is_empty());
        assert!(!a.has_build_headers() && !a.has_response_transform() && !a.has_stream_transform());

        let b = Adapter::load(
            "file.lua",
            r#"return { name = "renamed", version = 3, endpoint = "/v2/chat", stream_format = "ndjson",
                        headers = { ["X-Static"] = "yes", ["X-Num"] = 7 },
                        transform_request = function(x) return x end }"#,
        )
        .expect("loads");
        assert_eq!(b.name(), "renamed");
        assert_eq!(b.version(), "3");
        assert_eq!(b.endpoint(), "/v2/chat");
        assert_eq!(b.stream_endpoint(), "/v2/chat");
        assert_eq!(b.stream_format(), StreamFormat::Ndjson);
        assert_eq!(
            b.static_headers(),
            [
                ("X-Num".into(), "7".into()),
                ("X-Static".into(), "yes".into())
            ]
        );
        assert_eq!(
            b.url("http://h:1/v1///", "m", false),
            "http://h:1/v1/v2/chat"
        );
    });
}

#[test]
fn missing_or_nil_transforms_pass_through() {
    watchdog(20, || {
        let a = Adapter::load(
            "p.lua",
            "return { transform_request = function(x) return 'req:' .. x end }",
        )
        .expect("loads");
        assert_eq!(
            a.transform_response("{\"a\":1}").expect("passes"),
            "{\"a\":1}"
        );
        assert_eq!(a.transform_stream_chunk("data").expect("passes"), "data");
        assert_eq!(a.transform_request("x").expect("runs"), "req:x");

        let b = Adapter::load(
            "q.lua",
            r#"return { transform_request = function(x) if x == "nil" then return nil end return { n = 1, list = json.array() } end,
                        transform_response = function(x) return nil end,
                        transform_stream_chunk = function(x) if x == "skip" then return "" end end }"#,
        )
        .expect("loads");
        assert_eq!(
            b.transform_response("raw").expect("nil passes through"),
            "raw"
        );
        assert_eq!(
            b.transform_stream_chunk("raw").expect("nil passes through"),
            "raw"
        );
        assert_eq!(b.transform_stream_chunk("skip").expect("empty skips"), "");
        assert_eq!(
            b.transform_request("t").expect("a table is encoded"),
            r#"{"list":[],"n":1}"#
        );
        let err = b
            .transform_request("nil")
            .expect_err("a request must be produced");
        assert!(
            matches!(
                err,
                AdapterError::Script {
                    function: "transform_request",
                    ..
                }
            ),
            "{err:?}"
        );
    });
}

#[test]
fn build_headers_receives_meta() {
    watchdog(20, || {
        let a = Adapter::load(
            "h.lua",
            r#"return { headers = { ["X-Static"] = "unused" },
                 build_headers = function(m)
                   return { ["X-Echo"] = table.concat({m.url, m.method, m.body, m.api_key, tostring(m.timestamp), m.source.name}, "|"),
                            ["X-Type"] = math.type(m.timestamp) }
                 end,
                 transform_request = function(x) return x end }"#,
        )
        .expect("loads");
        let meta = HeaderMeta {
            url: "http://h/v1/chat".into(),
            method: "POST".into(),
            body: "{}".into(),
            api_key: "k".into(),
            timestamp: 1_700_000_000,
            source: "home".into(),
        };
        assert_eq!(
            a.headers(&meta).expect("headers"),
            [
                (
                    "X-Echo".to_string(),
                    "http://h/v1/chat|POST|{}|k|1700000000|home".to_string()
                ),
                ("X-Type".to_string(), "integer".to_string())
            ]
        );
        assert!(
            !format!("{meta:?}").contains("\"k\""),
            "Debug never shows the key"
        );
    });
}

#[test]
fn header_injection_is_refused() {
    watchdog(20, || {
        let a = Adapter::load(
            "h.lua",
            r#"return { build_headers = function(m) return { ["X-Bad"] = "a\r\nEvil: 1" } end,
                        transform_request = function(x) return x end }"#,
        )
        .expect("loads");
        let err = a.headers(&HeaderMeta::default()).expect_err("refused");
        assert!(
            matches!(
                err,
                AdapterError::Script {
                    function: "build_headers",
                    ..
                }
            ),
            "{err:?}"
        );
    });
}

#[test]
fn request_headers_add_bearer_only_when_needed() {
    watchdog(20, || {
        let a = bundled("openai");
        let meta = HeaderMeta {
            api_key: "sk-1".into(),
            ..HeaderMeta::default()
        };
        let h = a.request_headers(&meta).expect("headers");
        assert_eq!(
            h,
            [
                ("Content-Type".to_string(), "application/json".to_string()),
                ("Authorization".to_string(), "Bearer sk-1".to_string())
            ]
        );
        let none = a.request_headers(&HeaderMeta::default()).expect("headers");
        assert_eq!(
            none,
            [("Content-Type".to_string(), "application/json".to_string())],
            "no key, no bearer"
        );
    });
}

#[test]
fn concurrent_callers_are_serialised_and_get_their_own_answers() {
    watchdog(30, || {
        let a = Arc::new(
            Adapter::load(
                "c.lua",
                r#"local calls = 0
                   return { transform_request = function(x)
                     calls = calls + 1
                     local before = calls
                     for i = 1, 2000 do local _ = i * 2 end
                     assert(before == calls, "interleaved")
                     return "echo:" .. x
                   end }"#,
            )
            .expect("loads"),
        );
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let a = Arc::clone(&a);
                std::thread::spawn(move || {
                    for i in 0..50 {
                        let input = format!("{t}-{i}");
                        assert_eq!(
                            a.transform_request(&input).expect("runs"),
                            format!("echo:{input}")
                        );
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("caller thread");
        }
    });
}

#[test]
fn load_file_names_the_adapter_after_the_file() {
    watchdog(20, || {
        let dir = hearth_testkit::fresh_dir("adapter-file");
        let path = dir.join("homelab.lua");
        std::fs::write(
            &path,
            "return { transform_request = function(x) return x end }",
        )
        .expect("write");
        let a = Adapter::load_file(&path, AdapterLimits::default()).expect("loads");
        assert_eq!(a.name(), "homelab");
        let missing = Adapter::load_file(&dir.join("nope.lua"), AdapterLimits::default())
            .expect_err("missing");
        assert!(matches!(missing, AdapterError::Io { .. }), "{missing:?}");
        let _ = std::fs::remove_dir_all(&dir);
    });
}
