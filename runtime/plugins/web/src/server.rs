//! The HTTP server: the listener is bound on the plugin's start thread (so a busy port fails
//! the start with the port and the setting named), then served by axum on a current-thread
//! tokio runtime on its own thread. Nothing async runs anywhere else in Hearth.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

use crate::app::App;
use crate::error::WebError;
use crate::{assets, chat, manage, openai};

/// Binds `addr` (the value of `plugin.web.bind`).
pub fn bind(addr: &str) -> Result<TcpListener, WebError> {
    let parsed: SocketAddr = addr.parse().map_err(|_| WebError::BadBind {
        value: addr.to_owned(),
    })?;
    let listener = TcpListener::bind(parsed).map_err(|source| WebError::Bind {
        addr: addr.to_owned(),
        source,
    })?;
    listener
        .set_nonblocking(true)
        .map_err(|source| WebError::Bind {
            addr: addr.to_owned(),
            source,
        })?;
    Ok(listener)
}

/// Every route.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(assets::index))
        .route("/assets/{name}", get(assets::asset))
        .route("/api/session", get(manage::get_session))
        .route("/api/setup", post(manage::post_setup))
        .route("/api/login", post(manage::post_login))
        .route("/api/logout", post(manage::post_logout))
        .route("/api/chat", post(chat::post_chat))
        .route("/api/chat/{id}/events", get(chat::get_events))
        .route("/api/stop", post(chat::post_stop))
        .route("/api/history", get(chat::get_history))
        .route("/api/memory", get(manage::get_memory))
        .route("/api/memory/{id}/forget", post(manage::post_forget))
        .route("/api/list/{what}", get(manage::get_listing))
        .route("/api/plugins/{name}/{action}", post(manage::post_plugin))
        .route("/api/sources", post(manage::post_source))
        .route("/api/sources/{name}/{action}", post(manage::post_source))
        .route("/v1/models", get(openai::models))
        .route("/v1/chat/completions", post(openai::completions))
        .layer(axum::extract::DefaultBodyLimit::max(1 << 20))
        .with_state(app)
}

/// Serves `listener` until the process ends.
pub fn serve(listener: TcpListener, app: Arc<App>) -> Result<(), WebError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .max_blocking_threads(16)
        .build()
        .map_err(WebError::Runtime)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener).map_err(WebError::Runtime)?;
        let service = router(app).into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(listener, service)
            .await
            .map_err(WebError::Runtime)
    })
}
