//! Session routes (first-run password, login with throttling, logout) and the management
//! routes the page uses: memory search, plugins, sources, status. Each management request is
//! one kernel call; source keys go in and never come back (the kernel's source list has none).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hearth_plugin::{Value, json};
use serde::Deserialize;

use crate::app::{App, Authorized, COOKIE, SESSION_SECS, answer, now_secs, peer_ip, refuse};
use crate::secret::{self, Signer};

#[derive(Deserialize)]
struct PasswordIn {
    password: String,
}

/// Shortest password the first-run page accepts.
const MIN_PASSWORD: usize = 8;

fn logged_in(app: &App) -> Response {
    let token = app
        .signer
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .session(now_secs() + SESSION_SECS);
    let csrf = app.csrf(&token);
    let cookie =
        format!("{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={SESSION_SECS}");
    let mut response = Json(json!({"csrf": csrf})).into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    response
}

/// `GET /api/session`: whether a password must be set, whether this browser is logged in,
/// and its CSRF token.
pub async fn get_session(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    let setup = app
        .password_hash
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .is_none();
    let session = app.session(&headers);
    Json(json!({
        "setup_needed": setup,
        "logged_in": session.is_some(),
        "csrf": session.map(|s| app.csrf(&s)),
    }))
    .into_response()
}

/// `POST /api/setup {password}`: the first-run page; only while no password is set.
pub async fn post_setup(State(app): State<Arc<App>>, body: Bytes) -> Response {
    let Ok(input) = serde_json::from_slice::<PasswordIn>(&body) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "body must be {\"password\": \"...\"}",
        );
    };
    if input.password.chars().count() < MIN_PASSWORD {
        return refuse(
            StatusCode::BAD_REQUEST,
            &format!("choose a password of at least {MIN_PASSWORD} characters"),
        );
    }
    if app
        .password_hash
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .is_some()
    {
        return refuse(StatusCode::FORBIDDEN, "a password is set already: log in");
    }
    let hash = secret::hash_password(&input.password);
    let secret = secret::random_hex(32);
    let (h, s) = (hash.clone(), secret.clone());
    let saved = app
        .call(move |host| {
            host.settings_set("password_hash", json!(h))?;
            host.settings_set("session_secret", json!(s))
        })
        .await;
    if let Err(r) = saved {
        return r;
    }
    *app.password_hash.write().unwrap_or_else(|p| p.into_inner()) = Some(hash);
    *app.signer.write().unwrap_or_else(|p| p.into_inner()) = Signer::new(&secret);
    logged_in(&app)
}

/// `POST /api/login {password}`: a session cookie, or 403; 429 while the address is throttled.
pub async fn post_login(
    State(app): State<Arc<App>>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    body: Bytes,
) -> Response {
    let ip = peer_ip(&addr);
    if let Some(wait) = app.throttle.wait_for(ip, Instant::now()) {
        let mut r = refuse(
            StatusCode::TOO_MANY_REQUESTS,
            &format!(
                "too many wrong passwords: try again in {} s",
                wait.as_secs() + 1
            ),
        );
        if let Ok(v) = HeaderValue::from_str(&(wait.as_secs() + 1).to_string()) {
            r.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return r;
    }
    let Ok(input) = serde_json::from_slice::<PasswordIn>(&body) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "body must be {\"password\": \"...\"}",
        );
    };
    let stored = app
        .password_hash
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let Some(stored) = stored else {
        return refuse(
            StatusCode::FORBIDDEN,
            "no password is set yet: set one first",
        );
    };
    // PBKDF2 is slow on purpose: off the async thread.
    let ok = tokio::task::spawn_blocking(move || secret::verify_password(&stored, &input.password))
        .await
        .unwrap_or(false);
    if !ok {
        app.throttle.failed(ip, Instant::now());
        return refuse(StatusCode::FORBIDDEN, "wrong password");
    }
    app.throttle.succeeded(ip);
    logged_in(&app)
}

/// `POST /api/logout`: the cookie is cleared (tokens are stateless: it stays valid until its
/// expiry for whoever copied it; a new password ends every session).
pub async fn post_logout(_who: Authorized) -> Response {
    let mut r = Json(json!({})).into_response();
    let clear = format!("{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
    if let Ok(v) = HeaderValue::from_str(&clear) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// `GET /api/memory?q=...&k=N`: the cold items recall finds for a query, by meaning and
/// keyword, each with its id, scores and time (`items`), and the turns said so recently they
/// are still in the agent's working window that hold its words (`recent`, named `w12`). Only
/// reads: nothing is copied into the agent's working window.
#[derive(Deserialize)]
pub struct MemoryQuery {
    q: String,
    #[serde(default)]
    k: Option<u32>,
}

/// `GET /api/memory`.
pub async fn get_memory(
    State(app): State<Arc<App>>,
    _who: Authorized,
    Query(query): Query<MemoryQuery>,
) -> Response {
    let k = query.k.unwrap_or(10).clamp(1, 50);
    let q = query.q;
    let found = app
        .call(move |host| {
            let (items, recent) = host.memory_search_with_recent(&q, k as usize)?;
            Ok(json!({"items": items, "recent": recent}))
        })
        .await;
    answer(found)
}

/// `POST /api/memory/{id}/forget`: deletes one entry — by its number (`45`), or by name: `c45`,
/// or `w12` for a recent turn — with its whole turn, durably; the kernel audits it.
pub async fn post_forget(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    _who: Authorized,
) -> Response {
    const WHY: &str = "forgotten from the web page";
    // A bare number is a remembered entry's, as the page has always sent it. Any other form
    // goes as it is: the kernel reads names, and refuses one that names nothing (400).
    let name = if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
        format!("c{id}")
    } else {
        id.clone()
    };
    match app
        .call(move |host| host.memory_forget_named(&name, WHY))
        .await
    {
        Ok(true) => Json(json!({"forgotten": id})).into_response(),
        Ok(false) => refuse(StatusCode::NOT_FOUND, &format!("no memory has id {id}")),
        Err(r) => r,
    }
}

/// A control request's answer object, or the refusal.
async fn control_value(app: &Arc<App>, request: Value) -> Result<Value, Response> {
    match app.call(move |host| host.control(request)).await {
        Ok(answer) if answer["type"] == "error" => Err(refuse(
            StatusCode::BAD_REQUEST,
            answer["error"].as_str().unwrap_or("refused"),
        )),
        other => other,
    }
}

async fn control(app: &Arc<App>, request: Value) -> Response {
    match control_value(app, request).await {
        Ok(answer) => Json(answer).into_response(),
        Err(r) => r,
    }
}

/// `GET /api/status`, `/api/plugins`, `/api/sources`.
pub async fn get_listing(
    State(app): State<Arc<App>>,
    Path(what): Path<String>,
    _who: Authorized,
) -> Response {
    let request = match what.as_str() {
        "status" => {
            // The footprint is read from /proc, beside the kernel's own status.
            return match control_value(&app, json!({"op": "status"})).await {
                Ok(mut answer) => {
                    if let Some(plane) = app.host.data_plane() {
                        answer["status"]["daemon"] = crate::footprint::of(plane.kernel_pid());
                    }
                    answer["status"]["web"] = crate::footprint::of(std::process::id());
                    Json(answer).into_response()
                }
                Err(r) => r,
            };
        }
        "plugins" => json!({"op": "plugin", "action": "list"}),
        "sources" => json!({"op": "source_list"}),
        _ => return refuse(StatusCode::NOT_FOUND, "no such listing"),
    };
    control(&app, request).await
}

/// `POST /api/plugins/{name}/{action}`: enable, disable or reload.
pub async fn post_plugin(
    State(app): State<Arc<App>>,
    Path((name, action)): Path<(String, String)>,
    _who: Authorized,
) -> Response {
    if !["enable", "disable", "reload"].contains(&action.as_str()) {
        return refuse(
            StatusCode::BAD_REQUEST,
            "action is enable, disable or reload",
        );
    }
    control(
        &app,
        json!({"op": "plugin", "action": action, "name": name}),
    )
    .await
}

/// `POST /api/sources` (add: the body is the source, key included), `POST
/// /api/sources/{name}/test`, `POST /api/sources/{name}/remove`.
pub async fn post_source(
    State(app): State<Arc<App>>,
    path: Option<Path<(String, String)>>,
    _who: Authorized,
    body: Bytes,
) -> Response {
    let request = match path {
        None => match serde_json::from_slice::<Value>(&body) {
            Ok(source) => json!({"op": "source_add", "source": source}),
            Err(e) => return refuse(StatusCode::BAD_REQUEST, &format!("body: {e}")),
        },
        Some(Path((name, action))) => match action.as_str() {
            "test" => json!({"op": "source_test", "name": name}),
            "remove" => json!({"op": "source_remove", "name": name}),
            _ => return refuse(StatusCode::BAD_REQUEST, "action is test or remove"),
        },
    };
    control(&app, request).await
}
