//! One configured LLM source: where it is, which adapter speaks its wire format, and the
//! limits its calls run under. `hearth.toml` holds a list of them; the provider manager turns
//! each into a [`LuaSource`](super::LuaSource).

use crate::http::StreamTimeouts;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Why a [`SourceConfig`] is not valid; the text names the source and the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SourceConfigError {
    /// A required field is empty (or `nil`, `null`).
    #[error("source {name:?}: `{field}` is required")]
    Missing {
        /// The source's name (may be empty when that is the problem).
        name: String,
        /// The field: `name`, `base_url`, `model` or `adapter`.
        field: &'static str,
    },
    /// The base URL is neither `http://` nor `https://`.
    #[error("source {name:?}: base_url must start with http:// or https://")]
    BadScheme {
        /// The source's name.
        name: String,
        /// The base URL as written.
        base_url: String,
    },
    /// A timeout is not a positive number of seconds within the limit.
    #[error("source {name:?}: `{field}` must be a number of seconds in (0, {max}], not {value}")]
    BadTimeout {
        /// The source's name.
        name: String,
        /// The field: `first_byte_timeout`, `idle_timeout` or `total_timeout`.
        field: &'static str,
        /// The value as configured.
        value: f64,
        /// The longest limit allowed, in seconds.
        max: f64,
    },
}

/// One LLM source (SPEC §8.3 `core.llm.sources.<name>.*`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SourceConfig {
    /// The source's unique name.
    pub name: String,
    /// Where its API lives (`http://` or `https://`).
    pub base_url: String,
    /// The model to ask for.
    pub model: String,
    /// The API key ("" when none).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_key: String,
    /// Adapter script name (`openai`, `anthropic`, `gemini`, `ollama`, or a user's own).
    pub adapter: String,
    /// Higher is tried first.
    pub priority: i32,
    /// The model's window in tokens; 0 = unknown.
    pub context_window: usize,
    /// Sampling temperature; `None` = 0.7.
    pub temperature: Option<f64>,
    /// Completion token limit; 0 = 4096.
    pub max_tokens: u32,
    /// Seconds from sending a request to the first streamed event; `None` = the default
    /// (60, or 300 for a source on this machine; see [`SourceConfig::stream_timeouts`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_byte_timeout: Option<f64>,
    /// The longest gap in seconds between two streamed events; `None` = 30 (120 local).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_timeout: Option<f64>,
    /// Seconds one streamed answer may take in all; `None` = 600 (1800 local).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_timeout: Option<f64>,
    /// The model takes images: the images an input brought are sent to it as OpenAI
    /// `image_url` content parts (an adapter that speaks another API must map them). Off: it
    /// sees the marker lines alone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub vision: bool,
    /// The model is offered no tools: its requests go without the tool list, for a model that
    /// cannot call tools (it would only spend the list's tokens reading it and talk about it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_tools: bool,
}

impl SourceConfig {
    /// SPEC §7.2 `IsValidSourceConfig`, with the reason when it is not.
    pub fn validate(&self) -> Result<(), SourceConfigError> {
        let blank = |v: &str| v.trim().is_empty() || matches!(v, "nil" | "null" | "<nil>");
        for (field, value) in [
            ("name", &self.name),
            ("base_url", &self.base_url),
            ("model", &self.model),
            ("adapter", &self.adapter),
        ] {
            if blank(value) {
                return Err(SourceConfigError::Missing {
                    name: self.name.clone(),
                    field,
                });
            }
        }
        if !(self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
            return Err(SourceConfigError::BadScheme {
                name: self.name.clone(),
                base_url: self.base_url.clone(),
            });
        }
        for (field, value) in [
            ("first_byte_timeout", self.first_byte_timeout),
            ("idle_timeout", self.idle_timeout),
            ("total_timeout", self.total_timeout),
        ] {
            if let Some(v) = value
                && !(v.is_finite() && v > 0.0 && v <= MAX_TIMEOUT_SECS)
            {
                return Err(SourceConfigError::BadTimeout {
                    name: self.name.clone(),
                    field,
                    value: v,
                    max: MAX_TIMEOUT_SECS,
                });
            }
        }
        Ok(())
    }

    /// The limits a streamed call to this source runs under: the configured ones, the rest
    /// from [`StreamTimeouts::LOCAL`] when the base URL is a loopback host (the embedded
    /// server, a local Ollama: slow first tokens on small boards) or [`StreamTimeouts::REMOTE`].
    pub fn stream_timeouts(&self) -> StreamTimeouts {
        let defaults = if is_loopback(&self.base_url) {
            StreamTimeouts::LOCAL
        } else {
            StreamTimeouts::REMOTE
        };
        // Out-of-range values were refused by `validate`; clamp anyway so a bad one cannot panic.
        let secs = |v: Option<f64>, default: Duration| {
            v.filter(|v| v.is_finite() && *v > 0.0)
                .map_or(default, |v| {
                    Duration::from_secs_f64(v.min(MAX_TIMEOUT_SECS))
                })
        };
        StreamTimeouts {
            first_byte: secs(self.first_byte_timeout, defaults.first_byte),
            idle: secs(self.idle_timeout, defaults.idle),
            total: secs(self.total_timeout, defaults.total),
        }
    }
}

/// The longest limit a source may configure: a day.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// Whether `url`'s host is this machine.
fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host_port.split(':').next().unwrap_or(""),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_sources_get_the_local_limits_and_configured_ones_win() {
        let mut cfg = SourceConfig {
            name: "s".into(),
            base_url: "http://127.0.0.1:8080/v1".into(),
            model: "m".into(),
            adapter: "openai".into(),
            ..SourceConfig::default()
        };
        assert_eq!(cfg.stream_timeouts(), StreamTimeouts::LOCAL);
        for local in [
            "http://localhost/v1",
            "http://[::1]:9/v1",
            "http://u:p@127.0.0.2/",
        ] {
            cfg.base_url = local.into();
            assert_eq!(cfg.stream_timeouts(), StreamTimeouts::LOCAL, "{local}");
        }
        cfg.base_url = "https://api.example.com/v1".into();
        assert_eq!(cfg.stream_timeouts(), StreamTimeouts::REMOTE);
        cfg.idle_timeout = Some(0.25);
        let t = cfg.stream_timeouts();
        assert_eq!(t.idle, Duration::from_millis(250));
        assert_eq!(t.first_byte, StreamTimeouts::REMOTE.first_byte);
        assert!(cfg.validate().is_ok());
        cfg.total_timeout = Some(0.0);
        let err = cfg.validate().expect_err("zero is refused");
        assert!(
            matches!(
                err,
                SourceConfigError::BadTimeout {
                    field: "total_timeout",
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "source \"s\": `total_timeout` must be a number of seconds in (0, 86400], not 0"
        );
    }

    #[test]
    fn a_blank_field_or_a_foreign_scheme_is_named() {
        let mut cfg = SourceConfig {
            name: "s".into(),
            base_url: "ftp://host".into(),
            model: "nil".into(),
            adapter: "openai".into(),
            ..SourceConfig::default()
        };
        assert_eq!(
            cfg.validate(),
            Err(SourceConfigError::Missing {
                name: "s".into(),
                field: "model"
            })
        );
        cfg.model = "m".into();
        let err = cfg.validate().expect_err("ftp is refused");
        assert!(
            matches!(&err, SourceConfigError::BadScheme { base_url, .. } if base_url == "ftp://host"),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "source \"s\": base_url must start with http:// or https://"
        );
    }
}
