//! Which model made a dense vector. Vectors from different models (or the same model read with a
//! different dimension or pooling) live in unrelated spaces: their cosine is noise, so every
//! stored vector carries its fingerprint and only equal fingerprints are ever compared.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Hex digits of the model file's sha256 kept in a fingerprint: 48 bits, plenty to tell model
/// files apart while staying short enough to store next to every vector.
pub const FINGERPRINT_SHA_LEN: usize = 12;

/// How token states become one sentence vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// Average over tokens (what the default model does inside its graph).
    Mean,
    /// The first token's state.
    Cls,
}

impl Pooling {
    fn as_str(self) -> &'static str {
        match self {
            Pooling::Mean => "mean",
            Pooling::Cls => "cls",
        }
    }
}

/// Identity of a dense vector space, shown and stored as `model:sha12:dim:pooling`
/// (e.g. `use-m3:a555d41559da:512:mean`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Fingerprint {
    model: String,
    sha: String,
    dim: usize,
    pooling: Pooling,
}

/// A string that is not `model:sha12:dim:pooling`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid embedding fingerprint {input:?}: {reason}")]
pub struct FingerprintParseError {
    /// The rejected text (for [`Fingerprint::new`], its arguments joined as a fingerprint).
    pub input: String,
    /// Which rule it breaks.
    pub reason: &'static str,
}

impl Fingerprint {
    /// `model_sha256` is the hex sha256 of the model file (at least [`FINGERPRINT_SHA_LEN`] hex
    /// digits; only that prefix is kept, lower-cased). `model` is a short name without `:`.
    pub fn new(
        model: &str,
        model_sha256: &str,
        dim: usize,
        pooling: Pooling,
    ) -> Result<Self, FingerprintParseError> {
        let err = |reason| FingerprintParseError {
            input: format!("{model}:{model_sha256}:{dim}:{}", pooling.as_str()),
            reason,
        };
        if model.is_empty() || model.contains(':') {
            return Err(err("model name must be non-empty and contain no ':'"));
        }
        if model_sha256.len() < FINGERPRINT_SHA_LEN
            || !model_sha256.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Err(err("sha must be at least 12 hex digits"));
        }
        if dim == 0 {
            return Err(err("dimension must be positive"));
        }
        Ok(Self {
            model: model.to_owned(),
            sha: model_sha256[..FINGERPRINT_SHA_LEN].to_ascii_lowercase(),
            dim,
            pooling,
        })
    }

    /// The model's short name (no `:`), e.g. `use-m3`.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The first [`FINGERPRINT_SHA_LEN`] hex digits of the model file's sha256.
    pub fn sha(&self) -> &str {
        &self.sha
    }

    /// Components of each vector in this space (never 0).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// How the model pooled token states into the vector.
    pub fn pooling(&self) -> Pooling {
        self.pooling
    }

    /// Whether vectors of `self` and `other` may be compared or fused: every part must agree.
    pub fn compatible(&self, other: &Fingerprint) -> bool {
        self == other
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}:{}",
            self.model,
            self.sha,
            self.dim,
            self.pooling.as_str()
        )
    }
}

impl FromStr for Fingerprint {
    type Err = FingerprintParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason| FingerprintParseError {
            input: s.to_owned(),
            reason,
        };
        let mut parts = s.split(':');
        let (Some(model), Some(sha), Some(dim), Some(pooling), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(err("expected four ':'-separated parts"));
        };
        if sha.len() != FINGERPRINT_SHA_LEN {
            return Err(err("sha must be exactly 12 hex digits"));
        }
        let dim = dim.parse().map_err(|_| err("dimension is not a number"))?;
        let pooling = match pooling {
            "mean" => Pooling::Mean,
            "cls" => Pooling::Cls,
            _ => return Err(err("pooling must be mean or cls")),
        };
        Fingerprint::new(model, sha, dim, pooling).map_err(|e| err(e.reason))
    }
}

impl From<Fingerprint> for String {
    fn from(fp: Fingerprint) -> String {
        fp.to_string()
    }
}

impl TryFrom<String> for Fingerprint {
    type Error = FingerprintParseError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}
