//! `hearth bench distill [FILE]`: the rule distiller and the model distiller on a labelled set of
//! sentences (see `hearth_graph::distill_bench`), the model reached through the same sources the
//! daemon would use (`--config`, else the automatic default: Ollama on loopback or the embedded
//! model).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use hearth_graph::distill_bench::{
    LabelledSet, Score, rule_disagreements, score_model, score_rules,
};
use hearth_llm::provider::{ChatProvider, ChatRequest, Message, ProviderError, complete_text};
use hearth_runtime::config::Config;
use hearth_runtime::daemon::Sources;

/// Arguments of `hearth bench distill`.
#[derive(Args, Debug)]
pub struct DistillArgs {
    /// The labelled set (format `hearth-facts/1`); the one built into the binary when absent.
    file: Option<PathBuf>,
    /// The configuration whose sources answer (default: the automatic default source).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The rules alone (no model asked).
    #[arg(long)]
    no_model: bool,
    /// Print each prompt's answer as the model gave it (to standard error).
    #[arg(long)]
    show_answers: bool,
    /// Also list each sentence where the rules missed a labelled fact or found one no label
    /// has.
    #[arg(long)]
    show_facts: bool,
    /// Longest wait for one batch's answer, in seconds.
    #[arg(long, default_value_t = 300)]
    timeout_secs: u64,
}

/// Runs the benchmark and prints its table.
pub fn run(args: &DistillArgs) -> ExitCode {
    let set = match &args.file {
        None => LabelledSet::shipped(),
        Some(path) => match LabelledSet::load(path) {
            Ok(set) => set,
            Err(e) => {
                eprintln!("hearth: {e}");
                return ExitCode::from(1);
            }
        },
    };
    let facts: usize = set.items.iter().map(|i| i.facts.len()).sum();
    outln!(
        "distillation benchmark {:?}: {} sentences, {facts} labelled facts",
        set.name,
        set.items.len()
    );
    if args.show_facts {
        for d in rule_disagreements(&set) {
            outln!("{:?}", d.text);
            for (s, p, o) in &d.missed {
                outln!("  missed ({s}, {p}, {o})");
            }
            for (s, p, o) in &d.wrong {
                outln!("  wrong  ({s}, {p}, {o})");
            }
        }
    }
    if args.no_model {
        print_row("rules (and the clause extractor)", &score_rules(&set));
        return ExitCode::SUCCESS;
    }
    let scratch = std::env::temp_dir().join(format!("hearth-distill-bench-{}", std::process::id()));
    let code = with_model(args, &set, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    code
}

fn with_model(args: &DistillArgs, set: &LabelledSet, scratch: &std::path::Path) -> ExitCode {
    let mut cfg = match Config::load(args.config.as_deref()) {
        Ok(cfg) => cfg,
        Err(e) => {
            eprintln!("hearth: {e}");
            return ExitCode::from(1);
        }
    };
    cfg.data_dir = scratch.to_path_buf();
    let sources = match Sources::start(&cfg) {
        Ok(sources) => sources,
        Err(e) => {
            eprintln!("hearth: {e}");
            return ExitCode::from(1);
        }
    };
    let provider = sources.provider();
    let system = cfg.agent.system_prompt.clone();
    let timeout = Duration::from_secs(args.timeout_secs);
    let scored = score_model(
        set,
        |prompt| {
            let answer = ask(&provider, &system, prompt, timeout);
            if args.show_answers {
                eprintln!("distill: answer: {answer:?}");
            }
            answer
        },
        |line| eprintln!("distill: {line}"),
    );
    sources.shutdown();
    print_row("rules (and the clause extractor)", &scored.rules);
    print_row("model alone (grounded claims)", &scored.model);
    print_row("rules + model (what the graph holds)", &scored.with_rules);
    outln!(
        "model: {} prompts of up to {} sentences, {:.1} s in all; {} claims dropped as ungrounded; {} batches without an answer",
        scored.batches,
        hearth_graph::MODEL_BATCH,
        scored.model_time.as_secs_f64(),
        scored.ungrounded,
        scored.failed_batches
    );
    ExitCode::SUCCESS
}

/// One consolidation prompt, as the kernel sends it (the agent's system prompt, the task, no
/// tools), answered by the sources' provider; the streamed text.
fn ask(
    provider: &Arc<dyn ChatProvider>,
    system: &str,
    prompt: &str,
    timeout: Duration,
) -> Result<String, ProviderError> {
    let request = ChatRequest::new(
        vec![Message::system(system), Message::user(prompt)],
        Vec::new(),
    );
    complete_text(provider.as_ref(), &request, timeout)
}

fn print_row(label: &str, score: &Score) {
    outln!(
        "{label:<38} precision {:.3}  recall {:.3}  ({} correct of {} found, {} labelled)",
        score.precision(),
        score.recall(),
        score.correct,
        score.found,
        score.wanted
    );
}
