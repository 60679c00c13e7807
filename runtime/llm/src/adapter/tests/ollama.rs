use super::*;
use crate::adapter::StreamFormat;
use serde_json::json;

#[test]
fn ollama_request_uses_native_shape() {
    watchdog(20, || {
        let a = bundled("ollama");
        assert_eq!(a.endpoint(), "/api/chat");
        assert_eq!(a.stream_format(), StreamFormat::Ndjson);
        let out = parse(
            &a.transform_request(&fixture("request.json"))
                .expect("request"),
        );
        assert_eq!(out["model"], "test-model");
        assert_eq!(out["stream"], true);
        assert_eq!(
            out["options"],
            json!({"temperature": 0.7, "num_predict": 1024})
        );
        for k in [
            "max_tokens",
            "temperature",
            "tool_choice",
            "disable_thinking",
            "think",
        ] {
            assert!(out.get(k).is_none(), "{k} is not sent");
        }
        let msgs = out["messages"].as_array().expect("messages");
        assert_eq!(
            msgs[0],
            json!({"role": "system", "content": "You are Hearth, a home assistant."})
        );
        assert_eq!(
            msgs[3]["tool_calls"],
            json!([
                {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"function": {"name": "get_weather", "arguments": {"city": "Tokyo", "unit": "celsius"}}}
            ]),
            "arguments are objects in the native API"
        );
        assert_eq!(
            msgs[4],
            json!({"role": "tool", "content": "{\"temp_c\":18,\"sky\":\"cloudy\"}", "tool_name": "get_weather"})
        );
        assert_eq!(
            msgs[6],
            json!({"role": "user", "content": "And what is in this picture?", "images": ["iVBORw0KGgoAAAANSUhEUg=="]})
        );
        assert_eq!(out["tools"][0]["function"]["name"], "get_weather");
        assert_eq!(
            out["tools"][1]["function"]["parameters"]["required"],
            json!([])
        );
    });
}

#[test]
fn ollama_request_is_explicit_about_streaming_and_thinking() {
    watchdog(20, || {
        let a = bundled("ollama");
        let req = json!({"model": "qwen3", "messages": [{"role": "user", "content": "hi"}], "disable_thinking": false,
                         "extra_body": {"keep_alive": "5m", "options": {"num_ctx": 8192}}});
        let out = parse(&a.transform_request(&req.to_string()).expect("request"));
        assert_eq!(
            out["stream"], false,
            "Ollama streams by default, so false is sent"
        );
        assert_eq!(out["think"], true);
        assert_eq!(out["keep_alive"], "5m");
        assert_eq!(out["options"], json!({"num_ctx": 8192}));
    });
}

#[test]
fn ollama_text_response() {
    watchdog(20, || {
        let a = bundled("ollama");
        let out = parse(
            &a.transform_response(&fixture("ollama/response_text.json"))
                .expect("response"),
        );
        assert_response_shape(&out);
        assert_eq!(out["content"], "Hello! How are you today?");
        assert_eq!(out["finish_reason"], "stop");
        assert_eq!(
            out["token_usage"],
            json!({"prompt": 26, "completion": 298, "total": 324})
        );
        assert_eq!(out["tool_calls"], json!([]));
    });
}

#[test]
fn ollama_tool_call_response() {
    watchdog(20, || {
        let a = bundled("ollama");
        let out = parse(
            &a.transform_response(&fixture("ollama/response_tool_calls.json"))
                .expect("response"),
        );
        assert_response_shape(&out);
        assert_eq!(out["finish_reason"], "tool_calls");
        assert_eq!(
            out["reasoning_content"],
            "The user wants the weather in Paris, so I call get_weather."
        );
        let calls = out["tool_calls"].as_array().expect("calls");
        assert_eq!(calls[0]["id"], "call_0");
        assert_eq!(
            calls[0]["arguments"],
            json!({"city": "Paris", "unit": "celsius"})
        );
        assert_eq!(calls[1]["id"], "call_8f2k1x0q");
        assert_eq!(calls[1]["name"], "list_timers");
        assert_eq!(calls[1]["arguments"], json!({}));
        assert_eq!(
            out["token_usage"],
            json!({"prompt": 122, "completion": 33, "total": 155})
        );
    });
}

#[test]
fn ollama_stream_text_reassembles_with_usage() {
    watchdog(20, || {
        let a = bundled("ollama");
        let f = fold_stream(&a, &ndjson_lines(&fixture("ollama/stream_text.ndjson")));
        assert_eq!(f.content, "The sky is blue — 天空是蓝色的.");
        assert!(f.done);
        assert_eq!(f.finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            f.usage,
            Some(json!({"prompt": 61, "completion": 468, "total": 529}))
        );
    });
}

#[test]
fn ollama_stream_tool_calls_and_thinking() {
    watchdog(20, || {
        let a = bundled("ollama");
        let f = fold_stream(
            &a,
            &ndjson_lines(&fixture("ollama/stream_tool_calls.ndjson")),
        );
        assert_eq!(f.reasoning, "Need the weather for two cities.");
        let calls: Vec<&Call> = f.calls.values().collect();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(calls[0].name, "get_weather");
        assert_eq!(parse(&calls[0].arguments), json!({"city": "Paris"}));
        assert_eq!(calls[1].id, "call_x7a");
        assert_eq!(
            parse(&calls[1].arguments),
            json!({"city": "Tokyo", "unit": "celsius"})
        );
        assert_eq!(
            f.usage,
            Some(json!({"prompt": 140, "completion": 61, "total": 201}))
        );
        let err = parse(
            &a.transform_stream_chunk(r#"{"error":"model not found"}"#)
                .expect("chunk"),
        );
        assert_eq!(
            err,
            json!({"content": "", "done": true, "finish_reason": "error"})
        );
    });
}
