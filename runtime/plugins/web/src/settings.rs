//! The web channel's settings (`plugin.web.*` in the kernel's registry), their definitions,
//! and what a first start fills in: a session key, an API key, and the hash of a password
//! given as `plugin.web.password` (which is then cleared, so no plain password stays stored).

use std::net::SocketAddr;

use hearth_plugin::{Host, Value, json};

use crate::error::WebError;
use crate::secret;

/// The default listening address.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";

/// The settings as the server starts with them.
pub struct WebConfig {
    /// `HOST:PORT` to listen on.
    pub bind: String,
    /// The password's hash, once there is one.
    pub password_hash: Option<String>,
    /// Signs sessions.
    pub session_secret: String,
    /// The programs' key.
    pub api_key: String,
}

fn define(host: &Host, key: &str, default: Value, description: &str) -> Result<(), WebError> {
    // Listings (the CLI's `settings list`, the page) show only that these are set.
    let secret = matches!(
        key,
        "password" | "password_hash" | "session_secret" | "api_key"
    );
    host.call(
        "settings.registerDef",
        json!({"def": {"key": key, "kind": "string", "default": default, "description": description, "secret": secret}}),
    )?;
    Ok(())
}

fn string(host: &Host, key: &str) -> Result<Option<String>, WebError> {
    Ok(host
        .settings_get(key)?
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_owned))
}

/// Reads (and on a first start fills in) the settings; refuses a non-loopback bind without a
/// password.
pub fn load(host: &Host) -> Result<WebConfig, WebError> {
    define(
        host,
        "bind",
        json!(DEFAULT_BIND),
        "Address the web page and API listen on (HOST:PORT).",
    )?;
    define(
        host,
        "password",
        json!(""),
        "Set to choose the page's password; it is hashed into password_hash and cleared.",
    )?;
    define(
        host,
        "password_hash",
        json!(""),
        "PBKDF2 hash of the page's password (set from the first-run page).",
    )?;
    define(
        host,
        "session_secret",
        json!(""),
        "Key signing login sessions; changing it logs everybody out.",
    )?;
    define(
        host,
        "api_key",
        json!(""),
        "Key programs send as Authorization: Bearer (generated on first start).",
    )?;
    let bind = string(host, "bind")?.unwrap_or_else(|| DEFAULT_BIND.to_owned());
    let mut password_hash = string(host, "password_hash")?;
    let mut session_secret = string(host, "session_secret")?;
    if let Some(plain) = string(host, "password")? {
        password_hash = Some(secret::hash_password(&plain));
        host.settings_set("password_hash", json!(password_hash))?;
        host.settings_set("password", Value::Null)?;
        // A new password ends the sessions of the old one.
        session_secret = None;
    }
    let session_secret = match session_secret {
        Some(s) => s,
        None => {
            let s = secret::random_hex(32);
            host.settings_set("session_secret", json!(s))?;
            s
        }
    };
    let api_key = match string(host, "api_key")? {
        Some(k) => k,
        None => {
            let k = format!("hk-{}", secret::random_hex(24));
            host.settings_set("api_key", json!(k))?;
            host.log(
                "info",
                "web: generated an API key for programs; read it with `hearth settings get plugin.web.api_key`",
            );
            k
        }
    };
    let loopback = bind
        .parse::<SocketAddr>()
        .map_err(|_| WebError::BadBind {
            value: bind.clone(),
        })?
        .ip()
        .is_loopback();
    if !loopback && password_hash.is_none() {
        return Err(WebError::OpenWithoutPassword { addr: bind });
    }
    Ok(WebConfig {
        bind,
        password_hash,
        session_secret,
        api_key,
    })
}
