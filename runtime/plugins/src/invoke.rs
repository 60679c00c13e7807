//! One call into a plugin over its link: the call context as the wire carries it, a second try
//! across a reload's swap, and the control plane's typed errors as the handler contract's.

use std::time::Duration;

use hearth_rpc::{ErrorKind, RpcError, WireContext};
use hearth_stages::{CallContext, HandlerError, Trust};

use crate::link::Link;

/// How long a call that saw the pipe close waits to learn how the process ended.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The call context on the wire: the task, who started it and how far it is trusted, and the
/// time left (the handler's own deadline or the plugin's call timeout, whichever ends first).
pub(crate) fn wire_context(ctx: &CallContext, timeout: Duration) -> WireContext {
    let caller = ctx.caller();
    WireContext {
        task_id: match ctx.task_id() {
            0 => String::new(),
            id => id.to_string(),
        },
        caller: caller
            .plugin
            .clone()
            .unwrap_or_else(|| caller.source.clone()),
        trust: match ctx.trust() {
            Trust::Kernel => hearth_rpc::Trust::Kernel,
            Trust::Local => hearth_rpc::Trust::Builtin,
            _ => hearth_rpc::Trust::External,
        },
        timeout_ms: Some(ctx.remaining().min(timeout).as_millis() as u64),
        cancellable: false,
        call_id: String::new(),
    }
}

pub(crate) fn invoke<P: serde::Serialize, T: serde::de::DeserializeOwned>(
    link: &Link,
    what: &str,
    method: &str,
    params: &P,
) -> Result<T, HandlerError> {
    // Two tries: a call that reached the old process of a reload after it stopped serving is
    // answered "not started" without running, and goes to the new process instead.
    for attempt in 0..2 {
        let Some(peer) = link.peer_wait(link.call_timeout) else {
            return Err(HandlerError::Unavailable(format!(
                "{what}: plugin {} is not running ({})",
                link.name,
                link.last_exit().unwrap_or_else(|| "not started".into())
            )));
        };
        match peer.call_typed(method, params, link.call_timeout) {
            Err(RpcError::Remote { error, .. })
                if attempt == 0
                    && error.kind == ErrorKind::Unavailable
                    && (link.is_reloading() || link.peer().is_none_or(|p| !p.same(&peer))) => {}
            other => return other.map_err(|e| describe(link, what, e)),
        }
    }
    Err(HandlerError::Unavailable(format!(
        "{what}: plugin {} was being reloaded and did not take the call",
        link.name
    )))
}

/// The typed control-plane error as the handler contract's kind, with the sentence the model and
/// the user read.
fn describe(link: &Link, what: &str, e: RpcError) -> HandlerError {
    let plugin = &link.name;
    match e {
        RpcError::Remote { error, .. } => {
            let message = format!(
                "{what} of plugin {plugin} failed ({}): {}",
                error.kind.name(),
                error.message
            );
            match error.kind {
                ErrorKind::InvalidArguments => HandlerError::InvalidArguments(message),
                ErrorKind::Denied => HandlerError::Denied(message),
                ErrorKind::TimedOut => HandlerError::TimedOut,
                ErrorKind::Cancelled => HandlerError::Cancelled,
                ErrorKind::Unavailable | ErrorKind::Busy => HandlerError::Unavailable(message),
                _ => HandlerError::Failed(message),
            }
        }
        RpcError::Closed { .. } => HandlerError::Failed(format!(
            "plugin {plugin} exited during the call to {what} ({}); the call did not complete",
            link.wait_exit(EXIT_GRACE)
                .unwrap_or_else(|| "it closed its pipe".into())
        )),
        RpcError::TimedOut { after, .. } => HandlerError::Failed(format!(
            "{what} of plugin {plugin} did not answer within {after:?}; the call was cancelled"
        )),
        other => HandlerError::Failed(format!("{what} of plugin {plugin}: {other}")),
    }
}
