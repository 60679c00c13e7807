//! What each request starts: an answer at once, a streamed input handed to the journaling
//! worker, or a control request handed to the control worker. Nothing here waits.

use super::connection::Busy;
use super::control::{Control, ControlError};
use super::protocol::{Answer, HELP, Request};
use super::reactor::{Notice, Reactor, Started};
use crate::daemon::SettingsOp;
use hearth_kernel::ingress::stop_input;
use hearth_kernel::input::{InputEvent, ReplyListener, Trust};
use serde_json::json;
use std::sync::Arc;

impl Reactor {
    /// Starts `request` of connection `token`: answered at once, or the connection waits.
    pub(super) fn start(&mut self, token: usize, request: Request) -> Started {
        match request {
            Request::Auth { .. } => Started::Answered(Answer::authenticated()),
            Request::Help => Started::Answered(Answer::Response {
                content: HELP.into(),
                request_id: String::new(),
            }),
            Request::Send {
                text,
                source,
                media,
            } => {
                // The socket is the local operator's, reached only after its key check.
                let mut input = InputEvent::text(source.unwrap_or_else(|| "cli".into()), text)
                    .with_trust(Trust::Local);
                if !media.is_empty() {
                    input = input.with_payload("media_blocks", serde_json::Value::Array(media));
                }
                self.submit(token, input, false)
            }
            Request::Interrupt {
                text,
                level,
                source,
            } => {
                let input = InputEvent::text(source.unwrap_or_else(|| "cli".into()), text)
                    .with_payload("priority", json!(level.unwrap_or_else(|| "L1".into())))
                    .with_payload("interrupt", json!(true))
                    .with_trust(Trust::Local);
                self.submit(token, input, true)
            }
            Request::Stop => {
                // Not journaled (it is not a task) and never waits: straight to the ingress.
                let mut input = stop_input("cli");
                let request_id = input.request_id.clone();
                self.follow(&request_id, token, false);
                input.reply_to(self.replies_tx.clone(), self.listener());
                self.control.kernel().interrupt_with(input);
                Started::Busy(Busy::Stream(request_id))
            }
            other => self.control_request(token, other),
        }
    }

    fn listener(&self) -> Arc<dyn ReplyListener> {
        self.wake.clone()
    }

    /// Follows `input`'s answer on `token`, then has it journaled and submitted off this thread;
    /// `accepted` is written when the kernel's queue takes it.
    fn submit(&mut self, token: usize, mut input: InputEvent, interrupt: bool) -> Started {
        let request_id = input.request_id.clone();
        // Followed before it is submitted, so not a single delta can be missed.
        self.follow(&request_id, token, true);
        input.reply_to(self.replies_tx.clone(), self.listener());
        let control = self.control.clone();
        // If the worker is gone the input is dropped with the job, which answers `dropped`.
        self.admit.run(move || {
            let _ = control.kernel().submit_durably(input, interrupt);
        });
        Started::Busy(Busy::Stream(request_id))
    }

    /// Requests that may wait (on the kernel's snapshot, on a source's test call).
    fn control_request(&mut self, token: usize, request: Request) -> Started {
        let control = self.control.clone();
        let wake = self.wake.clone();
        // The socket's own part of a status, taken here on the reactor's thread.
        let socket = matches!(request, Request::Status).then(|| {
            serde_json::json!({
                "connections": self.conns.len(),
                "streaming": self.follows.len(),
                "deltas_written": self.direct.counts(),
            })
        });
        let queued = self.control_worker.run(move || {
            let mut answer = control_answer(&*control, request);
            if let (Some(socket), Answer::Status { status }) = (socket, &mut answer) {
                status["socket"] = socket;
            }
            if wake.notices.send(Notice::Answer { token, answer }).is_ok() {
                let _ = wake.waker.wake();
            }
        });
        if queued {
            Started::Busy(Busy::Control)
        } else {
            Started::Answered(Answer::error("hearthd is stopping"))
        }
    }
}

/// The answer of a control request (status, sources, plugins); it may wait on the kernel or
/// the network. Shared by the socket and the plugins' `kernel.control`.
pub fn control_answer(control: &dyn Control, request: Request) -> Answer {
    match request {
        Request::Status => Answer::Status {
            status: control.status(),
        },
        Request::SourceList => Answer::Sources {
            sources: control.sources(),
        },
        Request::SourceAdd { source } => result(control.add_source(source)),
        Request::SourceRemove { name } => result(control.remove_source(&name)),
        Request::SourceTest { name } => result(control.test_source(&name)),
        Request::Plugin { action, name } => match control.plugin(&action, name.as_deref()) {
            Ok(plugins) => Answer::Plugins { plugins },
            Err(error) => Answer::error(error.to_string()),
        },
        Request::Mcp { action } => match control.mcp(&action) {
            Ok(mcp) => Answer::Mcp { mcp },
            Err(error) => Answer::error(error.to_string()),
        },
        Request::Memory { action, arg, k } => match control.memory(&action, arg.as_deref(), k) {
            Ok(memory) => Answer::Memory { memory },
            Err(error) => Answer::error(error.to_string()),
        },
        Request::SettingsGet { key } => settings(control, SettingsOp::Get(key)),
        Request::SettingsList { prefix } => settings(control, SettingsOp::List(prefix)),
        Request::SettingsReset { key } => settings(control, SettingsOp::Reset(key)),
        Request::SettingsSet { key, value, text } => {
            settings(control, SettingsOp::Set { key, value, text })
        }
        other => Answer::error(format!("unexpected control request {other:?}")),
    }
}

fn settings(control: &dyn Control, op: SettingsOp) -> Answer {
    match control.settings(op) {
        Ok(settings) => Answer::Settings { settings },
        Err(error) => Answer::error(error.to_string()),
    }
}

fn result(r: Result<String, ControlError>) -> Answer {
    match r {
        Ok(content) => Answer::Response {
            content,
            request_id: String::new(),
        },
        Err(e) => Answer::error(e.to_string()),
    }
}
