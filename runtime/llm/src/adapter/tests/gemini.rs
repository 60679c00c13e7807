use super::*;
use crate::adapter::HeaderMeta;
use serde_json::json;

#[test]
fn gemini_endpoint_carries_the_model() {
    watchdog(20, || {
        let a = bundled("gemini");
        assert_eq!(
            a.endpoint_for("gemini-2.5-flash", false),
            "/models/gemini-2.5-flash:generateContent"
        );
        assert_eq!(
            a.url("https://example.test/v1beta/", "gemini-2.5-flash", true),
            "https://example.test/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            a.endpoint_for("a b/c", false),
            "/models/a%20b%2Fc:generateContent"
        );
    });
}

#[test]
fn gemini_key_travels_as_header_not_bearer() {
    watchdog(20, || {
        let a = bundled("gemini");
        let meta = HeaderMeta {
            api_key: "AIza-test".into(),
            ..HeaderMeta::default()
        };
        let all = a.request_headers(&meta).expect("headers");
        assert!(all.contains(&("x-goog-api-key".to_string(), "AIza-test".to_string())));
        assert!(
            !all.iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
        );
    });
}

#[test]
fn gemini_request_maps_contents_system_and_functions() {
    watchdog(20, || {
        let a = bundled("gemini");
        let out = parse(
            &a.transform_request(&fixture("request.json"))
                .expect("request"),
        );
        for k in [
            "model",
            "messages",
            "stream",
            "tool_choice",
            "max_tokens",
            "disable_thinking",
        ] {
            assert!(out.get(k).is_none(), "{k} is not a Gemini field");
        }
        assert_eq!(
            out["systemInstruction"],
            json!({"parts": [{"text": "You are Hearth, a home assistant."}, {"text": "Answer briefly."}]})
        );
        let contents = out["contents"].as_array().expect("contents");
        let roles: Vec<&str> = contents
            .iter()
            .map(|c| c["role"].as_str().expect("role"))
            .collect();
        assert_eq!(roles, ["user", "model", "user"]);
        assert_eq!(
            contents[0]["parts"],
            json!([{"text": "What's the weather in Paris and in Tokyo?"}])
        );
        assert_eq!(
            contents[1]["parts"],
            json!([
                {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
                {"functionCall": {"name": "get_weather", "args": {"city": "Tokyo", "unit": "celsius"}}}
            ])
        );
        assert_eq!(
            contents[2]["parts"],
            json!([
                {"functionResponse": {"name": "get_weather", "response": {"temp_c": 18, "sky": "cloudy"}}},
                {"functionResponse": {"name": "get_weather", "response": {"result": "sunny, 24 C"}}},
                {"text": "And what is in this picture?"},
                {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg=="}}
            ])
        );
        let decls = out["tools"][0]["functionDeclarations"]
            .as_array()
            .expect("declarations");
        assert_eq!(decls[0]["name"], "get_weather");
        assert!(
            decls[0]["parameters"].get("additionalProperties").is_none(),
            "rejected by Gemini"
        );
        assert_eq!(decls[0]["parameters"]["required"], json!(["city"]));
        assert_eq!(
            decls[0]["parameters"]["properties"]["unit"]["enum"],
            json!(["celsius", "fahrenheit"])
        );
        assert!(
            decls[1].get("parameters").is_none(),
            "a parameterless tool declares no schema"
        );
        assert_eq!(
            out["toolConfig"],
            json!({"functionCallingConfig": {"mode": "AUTO"}})
        );
        assert_eq!(
            out["generationConfig"],
            json!({"temperature": 0.7, "maxOutputTokens": 1024})
        );
    });
}

#[test]
fn gemini_text_response() {
    watchdog(20, || {
        let a = bundled("gemini");
        let out = parse(
            &a.transform_response(&fixture("gemini/response_text.json"))
                .expect("response"),
        );
        assert_response_shape(&out);
        assert_eq!(out["content"], "Paris is the capital of France.");
        assert_eq!(out["finish_reason"], "stop");
        assert_eq!(
            out["token_usage"],
            json!({"prompt": 8, "completion": 7, "total": 15})
        );
        assert_eq!(out["tool_calls"], json!([]));
    });
}

#[test]
fn gemini_function_call_response_round_trips_thought_signature() {
    watchdog(20, || {
        let a = bundled("gemini");
        let out = parse(
            &a.transform_response(&fixture("gemini/response_function_call.json"))
                .expect("response"),
        );
        assert_response_shape(&out);
        assert_eq!(
            out["reasoning_content"],
            "The user asks about Paris weather; I should call get_weather."
        );
        assert_eq!(out["content"], "");
        assert_eq!(out["finish_reason"], "tool_calls");
        assert_eq!(
            out["token_usage"],
            json!({"prompt": 96, "completion": 82, "total": 178})
        );
        let calls = out["tool_calls"].as_array().expect("calls");
        assert_eq!(calls[0]["name"], "get_weather");
        assert_eq!(
            calls[0]["arguments"],
            json!({"city": "Paris", "unit": "celsius"})
        );
        assert_eq!(calls[1]["name"], "list_timers");
        assert_eq!(calls[1]["arguments"], json!({}));
        let id = calls[0]["id"].as_str().expect("id");
        assert_ne!(id, calls[1]["id"].as_str().expect("id"), "ids are distinct");

        // Sending the call back restores the signature on the functionCall part.
        let req = json!({"model": "gemini-2.5-flash", "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": id, "content": "rain"}]});
        let body = parse(&a.transform_request(&req.to_string()).expect("request"));
        assert_eq!(
            body["contents"][1]["parts"][0]["thoughtSignature"],
            "CiQBVKhc7uFq0fSYHZ3wRk2pQn8="
        );
        assert_eq!(
            body["contents"][2]["parts"][0]["functionResponse"]["name"],
            "get_weather"
        );
    });
}

#[test]
fn gemini_stream_text_reassembles_with_usage() {
    watchdog(20, || {
        let a = bundled("gemini");
        let f = fold_stream(&a, &sse_data(&fixture("gemini/stream_text.sse")));
        assert_eq!(
            f.content,
            "The sky is blue because air molecules scatter short (blue) wavelengths more — Rayleigh scattering."
        );
        assert_eq!(f.finish_reason.as_deref(), Some("stop"));
        assert!(f.done);
        assert_eq!(
            f.usage,
            Some(json!({"prompt": 6, "completion": 39, "total": 45}))
        );
    });
}

#[test]
fn gemini_stream_function_calls_get_distinct_indexes() {
    watchdog(20, || {
        let a = bundled("gemini");
        let f = fold_stream(&a, &sse_data(&fixture("gemini/stream_function_call.sse")));
        let calls: Vec<&Call> = f.calls.values().collect();
        assert_eq!(
            calls.len(),
            3,
            "calls from different chunks never share an index: {calls:?}"
        );
        assert_eq!(calls[0].name, "get_weather");
        assert_eq!(
            parse(&calls[0].arguments),
            json!({"city": "Paris", "unit": "celsius"})
        );
        assert!(calls[0].id.contains("#sig:CiQBVKhc7uFq0fSYHZ3wRk2pQn8="));
        assert_eq!(parse(&calls[1].arguments), json!({"city": "Tokyo"}));
        assert_eq!(calls[2].name, "list_timers");
        assert_eq!(parse(&calls[2].arguments), json!({}));
        let ids: std::collections::BTreeSet<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids.len(), 3);
        assert_eq!(
            f.usage,
            Some(json!({"prompt": 96, "completion": 41, "total": 137}))
        );
    });
}
