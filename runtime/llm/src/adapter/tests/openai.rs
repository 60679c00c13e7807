use super::*;
use serde_json::json;

#[test]
fn openai_request_passes_through_minus_internal_keys() {
    watchdog(20, || {
        let a = bundled("openai");
        assert_eq!(a.name(), "openai");
        assert_eq!(a.endpoint(), "/chat/completions");
        let input = parse(&fixture("request.json"));
        let out = parse(&a.transform_request(&input.to_string()).expect("request"));
        assert!(out.get("disable_thinking").is_none());
        assert_eq!(out["stream_options"], json!({"include_usage": true}));
        // Everything else is unchanged, down to `content: null` and the empty `required: []`
        // and `properties: {}` of a parameterless tool.
        let mut expected = input.clone();
        let e = expected.as_object_mut().expect("object");
        e.remove("disable_thinking");
        e.insert("stream_options".into(), json!({"include_usage": true}));
        assert_eq!(out, expected);
        assert_eq!(
            out["tools"][1]["function"]["parameters"]["required"],
            json!([])
        );
        assert_eq!(
            out["tools"][1]["function"]["parameters"]["properties"],
            json!({})
        );
        assert_eq!(out["messages"][3]["content"], Value::Null);
        assert_eq!(out["temperature"], json!(0.7));
        assert!(out["max_tokens"].is_u64(), "counts stay integers");
    });
}

#[test]
fn openai_request_merges_extra_body_and_skips_usage_option_without_stream() {
    watchdog(20, || {
        let a = bundled("openai");
        let req = json!({"model": "m", "messages": [], "stream": false, "disable_thinking": false,
                         "temperature": 0.2,
                         "extra_body": {"top_k": 40, "temperature": 0.9, "chat_template_kwargs": {"enable_thinking": false}}});
        let out = parse(&a.transform_request(&req.to_string()).expect("request"));
        assert_eq!(
            out,
            json!({"model": "m", "messages": [], "stream": false, "top_k": 40, "temperature": 0.9,
                   "chat_template_kwargs": {"enable_thinking": false}})
        );
    });
}

#[test]
fn openai_text_response() {
    watchdog(20, || {
        let a = bundled("openai");
        let out = parse(
            &a.transform_response(&fixture("openai/response_text.json"))
                .expect("response"),
        );
        assert_response_shape(&out);
        assert_eq!(out["content"], "The capital of France is Paris.");
        assert_eq!(out["finish_reason"], "stop");
        assert_eq!(
            out["token_usage"],
            json!({"prompt": 19, "completion": 8, "total": 27})
        );
        assert_eq!(
            out["tool_calls"],
            json!([]),
            "no calls is an empty array, not an object"
        );
        assert!(out.get("reasoning_content").is_none());
    });
}

#[test]
fn openai_tool_call_response_decodes_arguments() {
    watchdog(20, || {
        let a = bundled("openai");
        let out = parse(
            &a.transform_response(&fixture("openai/response_tool_calls.json"))
                .expect("response"),
        );
        assert_response_shape(&out);
        assert_eq!(out["content"], "");
        assert_eq!(out["finish_reason"], "tool_calls");
        let calls = out["tool_calls"].as_array().expect("calls");
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0]["id"], "call_Kc3vTc0w5wtmuDxj4sMxEh3f");
        assert_eq!(calls[0]["name"], "get_weather");
        assert_eq!(
            calls[0]["arguments"],
            json!({"city": "Paris", "unit": "celsius"})
        );
        assert_eq!(
            calls[0]["raw_arguments"],
            "{\"city\":\"Paris\",\"unit\":\"celsius\"}"
        );
        assert_eq!(calls[1]["arguments"], json!({}));
        assert_eq!(
            out["token_usage"],
            json!({"prompt": 82, "completion": 47, "total": 129})
        );
    });
}

#[test]
fn openai_bad_arguments_become_empty_object() {
    watchdog(20, || {
        let a = bundled("openai");
        let resp = json!({"choices": [{"message": {"content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{not json"}},
            {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "[1,2]"}}]},
            "finish_reason": "tool_calls"}]});
        let out = parse(&a.transform_response(&resp.to_string()).expect("response"));
        assert_response_shape(&out);
        assert_eq!(out["tool_calls"][0]["arguments"], json!({}));
        assert_eq!(out["tool_calls"][0]["raw_arguments"], "{not json");
        assert_eq!(out["tool_calls"][1]["arguments"], json!({}));
        assert_eq!(
            out["token_usage"],
            json!({"prompt": 0, "completion": 0, "total": 0})
        );
    });
}

#[test]
fn openai_reasoning_response() {
    watchdog(20, || {
        let a = bundled("openai");
        let out = parse(
            &a.transform_response(&fixture("openai/response_reasoning.json"))
                .expect("response"),
        );
        assert_response_shape(&out);
        assert_eq!(
            out["reasoning_content"],
            "Compare the tenths digit: 1 < 8, so 9.11 < 9.8."
        );
        assert_eq!(out["content"], "9.11 is smaller than 9.8.");
    });
}

#[test]
fn openai_error_body_is_an_error() {
    watchdog(20, || {
        let a = bundled("openai");
        let err = a
            .transform_response(r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#)
            .expect_err("error body");
        assert!(err.to_string().contains("Rate limit reached"), "{err}");
    });
}

#[test]
fn openai_stream_text_reassembles_with_usage() {
    watchdog(20, || {
        let a = bundled("openai");
        let f = fold_stream(&a, &sse_data(&fixture("openai/stream_text.sse")));
        assert_eq!(f.content, "Bonjour from Paris — café ☕!");
        assert_eq!(f.finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            f.usage,
            Some(json!({"prompt": 12, "completion": 9, "total": 21}))
        );
        assert!(f.done);
        assert!(f.calls.is_empty());
        assert_eq!(f.reasoning, "");
    });
}

#[test]
fn openai_stream_tool_call_fragments_keep_index_id_and_name() {
    watchdog(20, || {
        let a = bundled("openai");
        let f = fold_stream(&a, &sse_data(&fixture("openai/stream_tool_calls.sse")));
        assert_eq!(f.calls.len(), 2);
        assert_eq!(f.calls[&0].id, "call_DdmO9pD3xa9XTPNJ32zg2hcA");
        assert_eq!(f.calls[&0].name, "get_weather");
        assert_eq!(f.call_args(0), json!({"city": "Paris"}));
        assert_eq!(f.calls[&1].id, "call_ABPo2BRu3HkcVbVhSqD7AV2g");
        assert_eq!(f.call_args(1), json!({"city": "Tokyo", "unit": "celsius"}));
        assert_eq!(f.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            f.usage,
            Some(json!({"prompt": 80, "completion": 52, "total": 132}))
        );
        assert_eq!(f.content, "");
    });
}

#[test]
fn openai_stream_reasoning_deltas() {
    watchdog(20, || {
        let a = bundled("openai");
        let f = fold_stream(&a, &sse_data(&fixture("openai/stream_reasoning.sse")));
        assert_eq!(f.reasoning, "Compare the tenths.");
        assert_eq!(f.content, "9.8 is larger.");
        assert_eq!(
            f.usage,
            Some(json!({"prompt": 18, "completion": 40, "total": 58}))
        );
        // The `reasoning` spelling used by other servers.
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": "", "reasoning": "hmm"}, "finish_reason": null}]});
        let out = parse(&a.transform_stream_chunk(&chunk.to_string()).expect("chunk"));
        assert_eq!(out["reasoning_content"], "hmm");
    });
}

#[test]
fn openai_stream_skips_chunks_without_choices_or_usage() {
    watchdog(20, || {
        let a = bundled("openai");
        assert_eq!(
            a.transform_stream_chunk(r#"{"id":"x","choices":[]}"#)
                .expect("chunk"),
            ""
        );
        assert_eq!(a.transform_stream_chunk("   ").expect("chunk"), "");
        assert_eq!(a.transform_stream_chunk(": keep-alive").expect("chunk"), "");
        let done = parse(&a.transform_stream_chunk("[DONE]").expect("chunk"));
        assert_eq!(done, json!({"content": "", "done": true}));
        let usage = parse(&a.transform_stream_chunk(r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}"#).expect("chunk"));
        assert_eq!(
            usage,
            json!({"content": "", "done": false, "usage": {"prompt": 3, "completion": 4, "total": 7}})
        );
    });
}
