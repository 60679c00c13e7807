//! `web`: Hearth's web channel, as a plugin process. A chat page that streams answers token by
//! token from the kernel's event ring, stops them, and shows the history from the journal; a
//! memory browser; plugin and source management; the status; and an OpenAI-compatible API
//! (`/v1/chat/completions`, `/v1/models`) for programs. Every message is an input on channel
//! `http`. Browsers log in with a password (a session cookie and a CSRF token); programs send
//! the API key as `Authorization: Bearer`.

#![warn(missing_docs)]
#![forbid(unsafe_code)]
// A refusal is the HTTP answer itself (axum's convention), built once per refused request.
#![allow(clippy::result_large_err)]

mod app;
mod assets;
mod chat;
mod error;
mod footprint;
mod manage;
mod openai;
mod secret;
mod server;
mod settings;
mod throttle;
mod turns;

use std::process::ExitCode;
use std::sync::{Arc, RwLock};

use hearth_plugin::{Plugin, Registrar, ToolError};

use crate::app::{App, CHANNEL};
use crate::secret::Signer;
use crate::throttle::Throttle;
use crate::turns::Turns;

struct WebPlugin;

impl Plugin for WebPlugin {
    fn name(&self) -> &str {
        "web"
    }

    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }

    fn start(&mut self, reg: &mut Registrar<'_>) -> Result<(), ToolError> {
        let host = reg.host().clone();
        let cfg = settings::load(&host).map_err(to_tool)?;
        let listener = server::bind(&cfg.bind).map_err(to_tool)?;
        reg.input_channel(CHANNEL, false)?;
        let app = Arc::new(App {
            host: host.clone(),
            turns: Arc::new(Turns::default()),
            throttle: Throttle::default(),
            password_hash: RwLock::new(cfg.password_hash),
            signer: RwLock::new(Signer::new(&cfg.session_secret)),
            api_key: cfg.api_key,
        });
        let (pump_host, turns) = (host.clone(), Arc::clone(&app.turns));
        std::thread::Builder::new()
            .name("web-pump".into())
            .spawn(move || turns::pump(&pump_host, &turns, CHANNEL))
            .map_err(|e| to_tool(error::WebError::Runtime(e)))?;
        let serve_host = host.clone();
        std::thread::Builder::new()
            .name("web-http".into())
            .spawn(move || {
                if let Err(e) = server::serve(listener, app) {
                    serve_host.log("error", &format!("web: the server stopped: {e}"));
                    // Exiting lets the supervisor restart the process.
                    std::process::exit(1);
                }
            })
            .map_err(|e| to_tool(error::WebError::Runtime(e)))?;
        host.log(
            "info",
            &format!(
                "web: serving http://{} (page {} bytes)",
                cfg.bind,
                assets::page_weight()
            ),
        );
        Ok(())
    }
}

fn to_tool(e: error::WebError) -> ToolError {
    match e {
        error::WebError::Kernel(e) => e,
        other => ToolError::new(hearth_plugin::ErrorKind::Failed, other.to_string()),
    }
}

fn main() -> ExitCode {
    hearth_plugin::run(WebPlugin)
}
