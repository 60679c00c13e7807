use super::*;
use crate::adapter::HeaderMeta;
use serde_json::json;

#[test]
fn anthropic_request_lifts_system_and_maps_tools() {
    watchdog(20, || {
        let a = bundled("anthropic");
        assert_eq!(a.endpoint(), "/messages");
        let out = parse(
            &a.transform_request(&fixture("request.json"))
                .expect("request"),
        );
        assert_eq!(
            out["system"],
            "You are Hearth, a home assistant.\n\nAnswer briefly."
        );
        assert_eq!(out["model"], "test-model");
        assert_eq!(out["max_tokens"], 1024);
        assert_eq!(out["stream"], true);
        assert_eq!(out["temperature"], json!(0.7));
        for k in ["disable_thinking", "stream_options"] {
            assert!(out.get(k).is_none(), "{k} must not be sent");
        }
        let msgs = out["messages"].as_array().expect("messages");
        let roles: Vec<&str> = msgs
            .iter()
            .map(|m| m["role"].as_str().expect("role"))
            .collect();
        assert_eq!(
            roles,
            ["user", "assistant", "user"],
            "system lifted, tool results folded into one user turn"
        );
        assert_eq!(
            msgs[0]["content"],
            json!([{"type": "text", "text": "What's the weather in Paris and in Tokyo?"}])
        );
        assert_eq!(
            msgs[1]["content"],
            json!([
                {"type": "tool_use", "id": "call_w1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "call_w2", "name": "get_weather", "input": {"city": "Tokyo", "unit": "celsius"}}
            ])
        );
        assert_eq!(
            msgs[2]["content"],
            json!([
                {"type": "tool_result", "tool_use_id": "call_w1", "content": "{\"temp_c\":18,\"sky\":\"cloudy\"}"},
                {"type": "tool_result", "tool_use_id": "call_w2", "content": "sunny, 24 C"},
                {"type": "text", "text": "And what is in this picture?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg=="}}
            ])
        );
        let tools = out["tools"].as_array().expect("tools");
        assert_eq!(tools[0]["name"], "get_weather");
        assert_eq!(tools[0]["description"], "Current weather for a city");
        assert_eq!(tools[0]["input_schema"]["required"], json!(["city"]));
        assert_eq!(tools[0]["input_schema"]["type"], "object");
        assert_eq!(
            tools[1]["input_schema"],
            json!({"type": "object", "properties": {}, "required": []})
        );
        assert!(tools[0].get("function").is_none() && tools[0].get("parameters").is_none());
        assert_eq!(out["tool_choice"], json!({"type": "auto"}));
    });
}

#[test]
fn anthropic_request_defaults_max_tokens_and_opens_with_user() {
    watchdog(20, || {
        let a = bundled("anthropic");
        let req = json!({"model": "claude", "stream": false, "disable_thinking": true, "temperature": 1.6,
                         "messages": [{"role": "assistant", "content": "Earlier answer"},
                                      {"role": "user", "content": "go on"}],
                         "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}],
                         "tool_choice": {"type": "function", "function": {"name": "f"}},
                         "extra_body": {"top_k": 5}});
        let out = parse(&a.transform_request(&req.to_string()).expect("request"));
        assert_eq!(out["max_tokens"], 4096, "max_tokens is required by the API");
        assert_eq!(out["temperature"], json!(1), "clamped to the API's 0..1");
        assert_eq!(out["messages"][0]["role"], "user");
        assert_eq!(
            out["messages"][1],
            json!({"role": "assistant", "content": [{"type": "text", "text": "Earlier answer"}]})
        );
        assert_eq!(out["tool_choice"], json!({"type": "tool", "name": "f"}));
        assert_eq!(out["top_k"], 5);
        assert!(out.get("stream").is_none() && out.get("system").is_none());
    });
}

#[test]
fn anthropic_headers_come_from_build_headers() {
    watchdog(20, || {
        let a = bundled("anthropic");
        assert!(a.has_build_headers());
        let meta = HeaderMeta {
            api_key: "sk-ant-test".into(),
            method: "POST".into(),
            ..HeaderMeta::default()
        };
        let h = a.headers(&meta).expect("headers");
        assert_eq!(
            h,
            [
                ("anthropic-version".to_string(), "2023-06-01".to_string()),
                ("x-api-key".to_string(), "sk-ant-test".to_string())
            ]
        );
        let all = a.request_headers(&meta).expect("headers");
        assert!(
            !all.iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("authorization")),
            "the key already travels in x-api-key"
        );
        assert!(
            all.iter()
                .any(|(n, v)| n == "Content-Type" && v == "application/json")
        );
    });
}

#[test]
fn anthropic_text_response() {
    watchdog(20, || {
        let a = bundled("anthropic");
        let out = parse(
            &a.transform_response(&fixture("anthropic/response_text.json"))
                .expect("response"),
        );
        assert_response_shape(&out);
        assert_eq!(
            out["content"],
            "Hello! How can I help with your home today?"
        );
        assert_eq!(out["finish_reason"], "stop");
        assert_eq!(
            out["token_usage"],
            json!({"prompt": 12, "completion": 14, "total": 26})
        );
        assert_eq!(out["tool_calls"], json!([]));
    });
}

#[test]
fn anthropic_tool_use_response() {
    watchdog(20, || {
        let a = bundled("anthropic");
        let out = parse(
            &a.transform_response(&fixture("anthropic/response_tool_use.json"))
                .expect("response"),
        );
        assert_response_shape(&out);
        assert_eq!(out["content"], "I'll check the weather in Paris.");
        assert_eq!(
            out["reasoning_content"],
            "The user wants the weather in Paris; call the tool."
        );
        assert_eq!(out["finish_reason"], "tool_calls");
        let calls = out["tool_calls"].as_array().expect("calls");
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0]["id"], "toolu_01A09q90qw90lq917835lq9");
        assert_eq!(calls[0]["name"], "get_weather");
        assert_eq!(
            calls[0]["arguments"],
            json!({"city": "Paris", "unit": "celsius"})
        );
        assert_eq!(calls[1]["arguments"], json!({}));
        assert_eq!(calls[1]["raw_arguments"], "{}");
        // Cached input counts as prompt.
        assert_eq!(
            out["token_usage"],
            json!({"prompt": 572, "completion": 89, "total": 661})
        );
    });
}

#[test]
fn anthropic_stream_text_reassembles_with_usage() {
    watchdog(20, || {
        let a = bundled("anthropic");
        let f = fold_stream(&a, &sse_data(&fixture("anthropic/stream_text.sse")));
        assert_eq!(f.content, "Hello, world — 你好!");
        assert_eq!(f.finish_reason.as_deref(), Some("stop"));
        assert!(f.done, "message_stop ends the stream");
        assert_eq!(
            f.usage,
            Some(json!({"prompt": 25, "completion": 15, "total": 40}))
        );
        assert!(
            f.skipped >= 3,
            "ping, empty block start and block stop are skipped"
        );
    });
}

#[test]
fn anthropic_stream_tool_use_uses_block_index() {
    watchdog(20, || {
        let a = bundled("anthropic");
        let f = fold_stream(&a, &sse_data(&fixture("anthropic/stream_tool_use.sse")));
        assert_eq!(f.content, "Okay, let me check.");
        assert_eq!(
            f.calls.keys().copied().collect::<Vec<_>>(),
            [1, 2],
            "stream_index = content block index"
        );
        assert_eq!(f.calls[&1].id, "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
        assert_eq!(f.calls[&1].name, "get_weather");
        assert_eq!(
            f.call_args(1),
            json!({"city": "San Francisco, CA", "unit": "fahrenheit"})
        );
        assert_eq!(f.calls[&2].name, "list_timers");
        assert_eq!(
            f.calls[&2].arguments, "",
            "no input fragments: the provider reads empty as {{}}"
        );
        assert_eq!(f.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            f.usage,
            Some(json!({"prompt": 472, "completion": 89, "total": 561}))
        );
    });
}

#[test]
fn anthropic_stream_thinking_and_length() {
    watchdog(20, || {
        let a = bundled("anthropic");
        let f = fold_stream(&a, &sse_data(&fixture("anthropic/stream_thinking.sse")));
        assert_eq!(f.reasoning, "27 * 453 = 12231.");
        assert_eq!(f.content, "27 * 453 = 12,231");
        assert_eq!(f.finish_reason.as_deref(), Some("length"));
        assert_eq!(
            f.usage,
            Some(json!({"prompt": 30, "completion": 40, "total": 70}))
        );
    });
}

#[test]
fn anthropic_stream_error_event() {
    watchdog(20, || {
        let a = bundled("anthropic");
        let ev = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let out = parse(&a.transform_stream_chunk(ev).expect("chunk"));
        assert_eq!(
            out,
            json!({"content": "", "done": true, "finish_reason": "error"})
        );
    });
}
