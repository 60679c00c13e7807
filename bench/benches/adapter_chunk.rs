//! Cost of one streamed chunk through the bundled OpenAI Lua adapter (transform + decode of the
//! unified chunk) against the native parses of the same chunk, measured in the same run: the
//! `serde_json::Value` parse (baseline) and the typed, borrowing parse the per-token path uses.

use criterion::{Criterion, criterion_group, criterion_main};
use hearth_llm::adapter::{Adapter, bundled};
use hearth_llm::provider::{
    NativeChunk, parse_openai_chunk, parse_openai_stream_chunk, parse_unified_chunk,
};
use std::hint::black_box;

const TEXT_CHUNK: &str = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" hello"},"finish_reason":null}]}"#;
const TOOL_CHUNK: &str = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": \"Par"}}]},"finish_reason":null}]}"#;

fn bench(c: &mut Criterion) {
    let adapter = Adapter::load(
        "openai.lua",
        bundled::source("openai").expect("bundled openai adapter"),
    )
    .expect("loads");
    for (name, chunk) in [("text", TEXT_CHUNK), ("tool_fragment", TOOL_CHUNK)] {
        let mut group = c.benchmark_group(format!("stream_chunk/{name}"));
        group.bench_function("native_rust_parse (baseline)", |b| {
            b.iter(|| parse_openai_chunk(black_box(chunk)).expect("parses"))
        });
        group.bench_function("native_typed_parse", |b| {
            b.iter(|| match parse_openai_stream_chunk(black_box(chunk)) {
                NativeChunk::Chunk(chunk) => chunk,
                other => panic!("the usual shape parses natively: {other:?}"),
            })
        });
        group.bench_function("lua_transform_and_decode", |b| {
            b.iter(|| {
                let unified = adapter
                    .transform_stream_chunk(black_box(chunk))
                    .expect("transforms");
                parse_unified_chunk(&unified).expect("decodes")
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
