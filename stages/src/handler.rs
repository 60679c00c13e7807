//! What a plugin registers on a stage: the handler and how it is run.

use std::time::Duration;

use crate::{CallContext, HandlerError, Stage, StageContext};

/// Code hooked onto a stage.
///
/// It works on a private copy of the context: its writes are kept only when it returns (`Ok` or
/// `Err`) within its timeout, so a handler that panics or hangs cannot leave a half-written context.
/// `call` says for which task and caller it runs, carries the stop (`call.is_cancelled()`) and the
/// handler's own deadline.
pub trait StageHandler: Send + Sync + 'static {
    /// Inspect or rewrite the context; an `Err` is recorded as `"<plugin>: <error>"` in `ctx.errors`.
    fn handle(&self, call: &CallContext, ctx: &mut StageContext) -> Result<(), HandlerError>;
}

impl<F> StageHandler for F
where
    F: Fn(&CallContext, &mut StageContext) -> Result<(), HandlerError> + Send + Sync + 'static,
{
    fn handle(&self, call: &CallContext, ctx: &mut StageContext) -> Result<(), HandlerError> {
        self(call, ctx)
    }
}

/// A stage handler from a closure that needs no call context and fails with a message.
pub fn stage_fn<F>(f: F) -> impl StageHandler
where
    F: Fn(&mut StageContext) -> Result<(), String> + Send + Sync + 'static,
{
    move |_: &CallContext, ctx: &mut StageContext| f(ctx).map_err(HandlerError::Failed)
}

/// Which tool calls a handler on before_toolcall / after_toolcall wants to see.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Every call (the default, and the only meaning on the other five stages).
    #[default]
    Global,
    /// Only calls of the registering plugin's own tools: `tool_calls[0].plugin` on before_toolcall,
    /// `tool_results[0].plugin` on after_toolcall (each tool runs with its own context, so element 0
    /// is that tool).
    OwnTools,
}

impl Scope {
    /// The plugin protocol's spelling: `"own_tools"`; anything else means global.
    pub fn from_wire(s: &str) -> Scope {
        if s == "own_tools" {
            Scope::OwnTools
        } else {
            Scope::Global
        }
    }

    /// The plugin protocol's spelling.
    pub const fn as_wire(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::OwnTools => "own_tools",
        }
    }

    /// Whether a handler of `plugin` with this scope runs on `stage` for `ctx`.
    pub fn applies(self, stage: Stage, plugin: &str, ctx: &StageContext) -> bool {
        match (self, stage) {
            (Scope::Global, _) => true,
            (Scope::OwnTools, Stage::BeforeToolcall) => {
                ctx.tool_calls.first().is_some_and(|c| c.plugin == plugin)
            }
            (Scope::OwnTools, Stage::AfterToolcall) => {
                ctx.tool_results.first().is_some_and(|r| r.plugin == plugin)
            }
            (Scope::OwnTools, _) => true,
        }
    }
}

/// The default per-handler time limit.
pub const DEFAULT_HANDLER_TIMEOUT: Duration = Duration::from_secs(5);

/// How a handler is registered: its owner, its place in the order, its scope, its time limit and
/// whether it may block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerSpec {
    /// The owning plugin; names the handler in errors and drives `Scope::OwnTools`.
    pub plugin: String,
    /// Higher runs earlier; equal priorities run in registration order.
    pub priority: i32,
    /// Which calls the handler sees on the tool-call stages.
    pub scope: Scope,
    /// After this the handler is abandoned and its writes discarded (blocking handlers only: an
    /// inline handler cannot be walked away from, it is only told its deadline).
    pub timeout: Duration,
    /// In-process code that never blocks (no I/O, no locks held by others, no waiting): it runs on
    /// the caller's thread with panic isolation, without a hop to a runner thread. The default is
    /// blocking: a runner thread with a timeout.
    pub inline: bool,
}

impl HandlerSpec {
    /// Priority 0, global scope, a 5 s timeout, blocking.
    pub fn new(plugin: impl Into<String>) -> HandlerSpec {
        HandlerSpec {
            plugin: plugin.into(),
            priority: 0,
            scope: Scope::Global,
            timeout: DEFAULT_HANDLER_TIMEOUT,
            inline: false,
        }
    }

    /// Declare the handler inline: it cannot block, so it runs where the stage runs.
    pub fn inline(mut self) -> HandlerSpec {
        self.inline = true;
        self
    }

    /// Declare the handler blocking (the default): it runs on a runner thread under its timeout.
    pub fn blocking(mut self) -> HandlerSpec {
        self.inline = false;
        self
    }

    /// Set the priority (higher runs earlier).
    pub fn priority(mut self, priority: i32) -> HandlerSpec {
        self.priority = priority;
        self
    }

    /// Set the scope.
    pub fn scope(mut self, scope: Scope) -> HandlerSpec {
        self.scope = scope;
        self
    }

    /// Set the time limit.
    pub fn timeout(mut self, timeout: Duration) -> HandlerSpec {
        self.timeout = timeout;
        self
    }
}

/// Names one registration, for `StagePipeline::unregister`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HandlerId {
    pub(crate) stage: Stage,
    /// Unique per pipeline and increasing in registration order.
    pub(crate) seq: u64,
}

impl HandlerId {
    /// The stage this registration is on.
    pub fn stage(self) -> Stage {
        self.stage
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ToolCall, ToolResult};

    #[test]
    fn spec_defaults_and_setters() {
        let spec = HandlerSpec::new("p");
        assert_eq!(spec.priority, 0);
        assert_eq!(spec.scope, Scope::Global);
        assert_eq!(spec.timeout, Duration::from_secs(5));
        assert!(!spec.inline, "blocking is the default");
        assert!(spec.clone().inline().inline);
        assert!(!spec.clone().inline().blocking().inline);
        let spec = spec
            .priority(-3)
            .scope(Scope::OwnTools)
            .timeout(Duration::from_millis(7));
        assert_eq!(
            (spec.priority, spec.scope, spec.timeout),
            (-3, Scope::OwnTools, Duration::from_millis(7))
        );
    }

    #[test]
    fn scope_wire_form() {
        assert_eq!(Scope::from_wire("own_tools"), Scope::OwnTools);
        assert_eq!(Scope::from_wire("OWN_TOOLS"), Scope::Global);
        assert_eq!(Scope::from_wire(""), Scope::Global);
        assert_eq!(Scope::from_wire(Scope::OwnTools.as_wire()), Scope::OwnTools);
    }

    #[test]
    fn own_tools_filters_only_toolcall_stages() {
        let mut ctx = StageContext::default();
        // No tool call at all: an own-tools handler has nothing of its own to see.
        assert!(!Scope::OwnTools.applies(Stage::BeforeToolcall, "a", &ctx));
        assert!(!Scope::OwnTools.applies(Stage::AfterToolcall, "a", &ctx));
        ctx.tool_calls.push(ToolCall {
            plugin: "a".into(),
            ..ToolCall::default()
        });
        ctx.tool_results.push(ToolResult {
            plugin: "b".into(),
            ..ToolResult::default()
        });
        assert!(Scope::OwnTools.applies(Stage::BeforeToolcall, "a", &ctx));
        assert!(!Scope::OwnTools.applies(Stage::BeforeToolcall, "b", &ctx));
        assert!(Scope::OwnTools.applies(Stage::AfterToolcall, "b", &ctx));
        assert!(!Scope::OwnTools.applies(Stage::AfterToolcall, "a", &ctx));
        for stage in Stage::ALL {
            assert!(Scope::Global.applies(stage, "z", &ctx));
            if !matches!(stage, Stage::BeforeToolcall | Stage::AfterToolcall) {
                assert!(Scope::OwnTools.applies(stage, "z", &ctx));
            }
        }
    }
}
