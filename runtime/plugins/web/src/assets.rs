//! The page's files, compiled into the binary: nothing is read from disk or fetched at run
//! time, and a path is served only if it is one of these names exactly (no `..`, no
//! directory, no file system behind it).

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Every asset: its name under `/assets/`, its content type, its bytes.
pub const ASSETS: &[(&str, &str, &str)] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/app.js"),
    ),
    (
        "app.css",
        "text/css; charset=utf-8",
        include_str!("../assets/app.css"),
    ),
];

/// The page itself.
pub const INDEX: &str = include_str!("../assets/index.html");

const SECURITY_HEADERS: [(header::HeaderName, &str); 3] = [
    (
        header::CONTENT_SECURITY_POLICY,
        "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    ),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::REFERRER_POLICY, "no-referrer"),
];

/// `GET /`.
pub async fn index() -> Response {
    let mut r = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX).into_response();
    for (k, v) in SECURITY_HEADERS {
        r.headers_mut()
            .insert(k, header::HeaderValue::from_static(v));
    }
    r
}

/// `GET /assets/{name}`.
pub async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, kind, body)) => (
            [
                (header::CONTENT_TYPE, *kind),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            *body,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}

/// Bytes of the page and its assets: what a first load transfers (before compression).
pub fn page_weight() -> usize {
    INDEX.len() + ASSETS.iter().map(|(_, _, b)| b.len()).sum::<usize>()
}
