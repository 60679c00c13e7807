//! Prompt tokens of "hello" with 4, 20 and 100 tools registered, counted with the default
//! model's tokenizer: what a request costs in prefill before the model reads a word. The
//! baseline, from the same run, is the same request carrying every registered schema (what
//! the kernel sent before it chose tools).

#[path = "../../runtime/kernel/tests/tool_choice/prompt.rs"]
#[allow(dead_code)]
mod prompt;

use hearth_llm::provider::ScriptStep;
use prompt::{model_tokens, prompt_tokens, sent_for};

fn main() {
    let tokens = model_tokens();
    println!("tool_schemas: prompt tokens of \"hello\" (default model's tokenizer)");
    println!(
        "{:>6} {:>8} {:>8} {:>12}",
        "tools", "offered", "tokens", "all schemas"
    );
    for n in [4usize, 20, 100] {
        let sent = sent_for(n, &["hello"], vec![ScriptStep::text("Hi!")]);
        let request = &sent.requests[0];
        let mut every = request.clone();
        every.tools = sent.every_schema;
        println!(
            "{n:>6} {:>8} {:>8} {:>12}",
            request.tools.len(),
            prompt_tokens(&tokens, request),
            prompt_tokens(&tokens, &every)
        );
    }
}
