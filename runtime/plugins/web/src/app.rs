//! What every request handler shares: the kernel (through the SDK's [`Host`]), the turns being
//! streamed, the secrets, and who is asking.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use hearth_plugin::{ErrorKind, Host, ToolError, Value, json};

use crate::secret::{self, Signer};
use crate::throttle::Throttle;
use crate::turns::Turns;

/// The channel every input from this process arrives on.
pub const CHANNEL: &str = "http";
/// The session cookie's name.
pub const COOKIE: &str = "hearth_session";
/// How long a session lasts, in seconds (24 h).
pub const SESSION_SECS: u64 = 24 * 3600;

/// The shared state.
pub struct App {
    /// The kernel.
    pub host: Host,
    /// Answers being streamed.
    pub turns: Arc<Turns>,
    /// Wrong passwords by address.
    pub throttle: Throttle,
    /// `plugin.web.password_hash`, once set.
    pub password_hash: RwLock<Option<String>>,
    /// Signs sessions and CSRF tokens.
    pub signer: RwLock<Signer>,
    /// `plugin.web.api_key`: programs send it as `Authorization: Bearer`.
    pub api_key: String,
}

/// Seconds since the epoch.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Who a request comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// A browser with a valid session (its token).
    Session(String),
    /// A program with the API key.
    Program,
}

/// A JSON error answer of the page's API.
pub fn refuse(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({"error": message}))).into_response()
}

/// A kernel call's failure as an answer, its status from what kind of failure the kernel
/// said it was: a request the kernel refused is the client's to fix (400, 403), a kernel busy,
/// starting or stopping is worth a retry (503, 504); only the kernel failing is a bad gateway.
pub fn kernel_error(e: &ToolError) -> Response {
    refuse(status_of(e.kind), &e.to_string())
}

/// The HTTP status of a kernel failure of `kind`.
fn status_of(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::InvalidArguments | ErrorKind::InvalidRequest | ErrorKind::ParseError => {
            StatusCode::BAD_REQUEST
        }
        ErrorKind::Denied => StatusCode::FORBIDDEN,
        ErrorKind::Unavailable | ErrorKind::Busy => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::TimedOut => StatusCode::GATEWAY_TIMEOUT,
        // The kernel failed, broke, or said something this build does not know.
        _ => StatusCode::BAD_GATEWAY,
    }
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}

/// The bearer token of a request, if any.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
}

impl App {
    /// The session of a request whose cookie is valid.
    pub fn session(&self, headers: &HeaderMap) -> Option<String> {
        let token = cookie(headers, COOKIE)?;
        let signer = self.signer.read().unwrap_or_else(|p| p.into_inner());
        signer.session_valid(&token, now_secs()).then_some(token)
    }

    /// The CSRF token of session `token`.
    pub fn csrf(&self, token: &str) -> String {
        self.signer
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .csrf(token)
    }

    /// Whether `key` is the API key (constant time).
    pub fn key_ok(&self, key: &str) -> bool {
        !self.api_key.is_empty() && secret::same(key, &self.api_key)
    }

    /// Lets a request through or refuses it with 403: a program with the API key, or a
    /// browser with a session — which must also carry the session's CSRF token in
    /// `X-CSRF-Token` on anything but GET/HEAD.
    pub fn authorize(&self, method: &Method, headers: &HeaderMap) -> Result<Caller, Response> {
        if let Some(key) = bearer(headers) {
            return if self.key_ok(key) {
                Ok(Caller::Program)
            } else {
                Err(refuse(StatusCode::FORBIDDEN, "the API key is not valid"))
            };
        }
        let Some(session) = self.session(headers) else {
            return Err(refuse(StatusCode::FORBIDDEN, "log in first"));
        };
        if method != Method::GET && method != Method::HEAD {
            let sent = headers
                .get("x-csrf-token")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            if !secret::same(sent, &self.csrf(&session)) {
                return Err(refuse(
                    StatusCode::FORBIDDEN,
                    "missing or wrong CSRF token (X-CSRF-Token)",
                ));
            }
        }
        Ok(Caller::Session(session))
    }

    /// Runs a blocking kernel call off the async thread.
    pub async fn call<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&Host) -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, Response> {
        let app = Arc::clone(self);
        match tokio::task::spawn_blocking(move || f(&app.host)).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(kernel_error(&e)),
            Err(e) => Err(refuse(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string())),
        }
    }

    /// The whole reply of `request_id`, asking the kernel until it is there.
    pub fn wait_reply(host: &Host, request_id: &str) -> Result<Value, ToolError> {
        loop {
            let reply = host.reply(request_id, std::time::Duration::from_secs(25))?;
            if reply["done"] == true {
                return Ok(reply);
            }
        }
    }
}

/// A request that passed [`App::authorize`]; as a handler argument it refuses the others
/// before the handler runs.
pub struct Authorized;

impl axum::extract::FromRequestParts<Arc<App>> for Authorized {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        app: &Arc<App>,
    ) -> Result<Self, Response> {
        app.authorize(&parts.method, &parts.headers)
            .map(|_| Authorized)
    }
}

/// A kernel call's value as JSON, or its refusal.
pub fn answer(result: Result<Value, Response>) -> Response {
    match result {
        Ok(v) => axum::Json(v).into_response(),
        Err(r) => r,
    }
}

/// The client's address (for throttling).
pub fn peer_ip(addr: &SocketAddr) -> IpAddr {
    addr.ip()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_request_is_the_clients_to_fix_and_only_a_failing_kernel_a_bad_gateway() {
        let status = |kind| kernel_error(&ToolError::new(kind, "why")).status();
        assert_eq!(status(ErrorKind::InvalidArguments), StatusCode::BAD_REQUEST);
        assert_eq!(status(ErrorKind::Denied), StatusCode::FORBIDDEN);
        assert_eq!(status(ErrorKind::Busy), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            status(ErrorKind::Unavailable),
            StatusCode::SERVICE_UNAVAILABLE
        );
        assert_eq!(status(ErrorKind::TimedOut), StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(status(ErrorKind::Failed), StatusCode::BAD_GATEWAY);
        assert_eq!(status(ErrorKind::Other(-1)), StatusCode::BAD_GATEWAY);
    }
}
