//! One [`ChatProvider`] in front of many sources (SPEC §7.2–§7.4): the turn engine keeps
//! calling a single provider while the manager orders the sources, retries each once, falls
//! back to the next, and keeps per-source health for `hearth status`.
//!
//! Falling back is only harmless while the caller has seen nothing, so a source's stream is
//! held back until its first chunk of substance (the first-chunk gate, `first_chunk_gate.rs`).
//! From then on the call belongs to that source: a later failure is returned as is and never
//! repeated elsewhere, because the user would see the answer start twice.

use super::availability::Availability;
use super::first_chunk_gate::{Attempt, call_gated};
use super::{
    ChatProvider, ChatRequest, Images, MediaReader, NO_SOURCE, ProviderError, StreamChunk, shown_to,
};
use hearth_engine::CancelToken;
use parking_lot::Mutex;
use serde::Serialize;
use std::cmp::Reverse;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Attempts per source before moving on (SPEC §7.3).
const ATTEMPTS_PER_SOURCE: u32 = 2;
const DEFAULT_MAX_TOKENS: u32 = 4096;
/// The request model that means "whatever the source serves".
const AUTO_MODEL: &str = "AUTO";

/// Where cooldowns read the time; tests inject a clock they can move instead of sleeping.
pub trait Clock: Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// The real monotonic clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// Timing of retries and cooldowns (SPEC §7.3 values by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ManagerConfig {
    /// Wait before a source's second attempt; cut short by cancellation.
    pub retry_pause: Duration,
    /// Cooldown after a source's first failure; doubles with each further one.
    pub cooldown_base: Duration,
    /// The longest a failing source cools down.
    pub cooldown_cap: Duration,
    /// The longest `Retry-After` wait honoured before a source's second attempt; a source that
    /// asks for more is passed over for the next one (and cools down at least that long).
    pub retry_after_cap: Duration,
}

impl Default for ManagerConfig {
    fn default() -> Self {
        Self {
            retry_pause: Duration::from_secs(2),
            cooldown_base: Duration::from_secs(30),
            cooldown_cap: Duration::from_secs(30 * 60),
            retry_after_cap: Duration::from_secs(60),
        }
    }
}

/// What routing knows about a source, given when it is registered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceInfo {
    /// The source's unique name.
    pub name: String,
    /// The model the source serves; empty = whatever the request names.
    pub model: String,
    /// Higher is tried first.
    pub priority: i32,
    /// Context window in tokens; 0 = ask the provider.
    pub context_window: usize,
    /// Whether the model takes images (OpenAI `image_url` content parts); a source that does
    /// not gets the marker lines alone.
    pub vision: bool,
}

impl SourceInfo {
    /// A source `name` serving `model`, priority 0, window unknown.
    pub fn new(name: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            model: model.into(),
            ..Self::default()
        }
    }

    /// Sets the priority (higher is tried first).
    pub fn with_priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// Sets the context window in tokens.
    pub fn with_context_window(mut self, tokens: usize) -> Self {
        self.context_window = tokens;
        self
    }

    /// Sets whether the model takes images.
    pub fn with_vision(mut self, vision: bool) -> Self {
        self.vision = vision;
        self
    }
}

/// One source as `hearth status` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SourceStatus {
    /// The source's name.
    pub name: String,
    /// The model it serves.
    pub model: String,
    /// Its priority.
    pub priority: i32,
    /// Its context window in tokens; 0 = unknown.
    pub context_window: usize,
    /// Whether it is the default source.
    pub is_default: bool,
    /// Whether the user chose it to be tried first ([`ProviderManager::prefer`]).
    pub preferred: bool,
    /// Whether it takes calls now (not cooling down).
    pub available: bool,
    /// Rejected our credentials (401/403); stays unavailable until re-registered (or until a
    /// call succeeds, which happens only when it is the default and nothing else is left).
    pub permanent: bool,
    /// Consecutive failed calls since the last success.
    pub fail_count: u32,
    /// Seconds from now until the cooldown ends, rounded up; `None` when not cooling down
    /// (a permanent block has no end and is `None` too).
    pub unavailable_until: Option<u64>,
    /// The error of its last failed call.
    pub last_error: Option<String>,
}

struct Source {
    info: SourceInfo,
    provider: Arc<dyn ChatProvider>,
    health: Availability,
}

/// A source name no registered source has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no LLM source is named {name:?} (sources: {})", known.join(", "))]
pub struct UnknownSource {
    /// The name asked for.
    pub name: String,
    /// The names there are.
    pub known: Vec<String>,
}

/// A source picked for one call, copied out so no lock is held while it streams.
struct Candidate {
    name: String,
    model: String,
    vision: bool,
    provider: Arc<dyn ChatProvider>,
}

/// Sources in registration order; the first is the default.
pub struct ProviderManager {
    config: ManagerConfig,
    clock: Arc<dyn Clock>,
    sources: Mutex<Vec<Source>>,
    /// The source the user chose to try first while it is available (`llm.setSource`).
    preferred: Mutex<Option<String>>,
    /// Where the images a request refers to come from, for a source that takes them.
    images: Option<Images>,
}

impl std::fmt::Debug for ProviderManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self
            .sources
            .lock()
            .iter()
            .map(|s| s.info.name.clone())
            .collect();
        f.debug_struct("ProviderManager")
            .field("config", &self.config)
            .field("sources", &names)
            .finish()
    }
}

impl Default for ProviderManager {
    fn default() -> Self {
        Self::new(ManagerConfig::default())
    }
}

impl ProviderManager {
    /// A manager with no sources, on the system clock.
    pub fn new(config: ManagerConfig) -> Self {
        Self::with_clock(config, Arc::new(SystemClock))
    }

    /// A manager with no sources, on `clock`.
    pub fn with_clock(config: ManagerConfig, clock: Arc<dyn Clock>) -> Self {
        Self {
            config,
            clock,
            sources: Mutex::new(Vec::new()),
            preferred: Mutex::new(None),
            images: None,
        }
    }

    /// Images a request refers to are read through `reader` for a source that takes them
    /// (without one, every source gets the marker lines alone).
    pub fn with_media(mut self, reader: Arc<dyn MediaReader>) -> Self {
        self.images = Some(Images::new(reader));
        self
    }

    /// Adds a source; the first one registered is the default. Registering a name again
    /// replaces that source in place and clears its health (a new key deserves a new try).
    pub fn register(&self, info: SourceInfo, provider: Arc<dyn ChatProvider>) {
        let mut sources = self.sources.lock();
        let source = Source {
            info,
            provider,
            health: Availability::default(),
        };
        match sources.iter_mut().find(|s| s.info.name == source.info.name) {
            Some(slot) => *slot = source,
            None => sources.push(source),
        }
    }

    /// Removes a source; when it was the default, the next one registered becomes it.
    pub fn remove(&self, name: &str) -> bool {
        let mut sources = self.sources.lock();
        let before = sources.len();
        sources.retain(|s| s.info.name != name);
        sources.len() != before
    }

    /// Tries `name` first (after a source serving a model a request names) while it is
    /// available; `None` goes back to priority order. A name no source has is refused.
    pub fn prefer(&self, name: Option<&str>) -> Result<(), UnknownSource> {
        let sources = self.sources.lock();
        if let Some(name) = name {
            known_source(&sources, name)?;
        }
        *self.preferred.lock() = name.map(str::to_owned);
        Ok(())
    }

    /// Whether a source is named `name`: what [`prefer`](Self::prefer) would refuse, asked
    /// before a preference is stored.
    pub fn check(&self, name: &str) -> Result<(), UnknownSource> {
        known_source(&self.sources.lock(), name)
    }

    /// The source the next request that names no model tries first.
    pub fn current(&self) -> Option<String> {
        self.plan("").into_iter().next().map(|c| c.name)
    }

    /// Every source in registration order.
    pub fn sources(&self) -> Vec<SourceStatus> {
        let now = self.clock.now();
        let preferred = self.preferred.lock().clone();
        self.sources
            .lock()
            .iter()
            .enumerate()
            .map(|(i, s)| SourceStatus {
                name: s.info.name.clone(),
                model: s.info.model.clone(),
                priority: s.info.priority,
                context_window: s.info.context_window,
                is_default: i == 0,
                preferred: preferred.as_deref() == Some(s.info.name.as_str()),
                available: s.health.is_available(now),
                permanent: s.health.permanent,
                fail_count: s.health.fail_count,
                unavailable_until: s.health.remaining(now).map(ceil_secs),
                last_error: s.health.last_error.clone(),
            })
            .collect()
    }

    /// Names of the sources a request for `model` would try, in order.
    pub fn candidates(&self, model: &str) -> Vec<String> {
        self.plan(model).into_iter().map(|c| c.name).collect()
    }

    /// SPEC §7.3 `orderedLocked` plus the availability filter: sources serving the requested
    /// model first (unless it is empty or AUTO), then higher priority, then the default, then
    /// by name. When every source is cooling down the default is tried anyway, so the user
    /// gets the real error rather than "no provider".
    fn plan(&self, model: &str) -> Vec<Candidate> {
        let now = self.clock.now();
        let preferred = self.preferred.lock().clone();
        let sources = self.sources.lock();
        let wanted = (!model.is_empty() && model != AUTO_MODEL).then_some(model);
        let mut order: Vec<(usize, &Source)> = sources.iter().enumerate().collect();
        order.sort_by_key(|&(i, s)| {
            (
                Reverse(wanted.is_some_and(|m| s.info.model == m)),
                Reverse(preferred.as_deref() == Some(s.info.name.as_str())),
                Reverse(s.info.priority),
                i != 0,
                s.info.name.as_str(),
            )
        });
        let mut picked: Vec<&Source> = order
            .into_iter()
            .map(|(_, s)| s)
            .filter(|s| s.health.is_available(now))
            .collect();
        if picked.is_empty() {
            picked.extend(sources.first());
        }
        picked
            .into_iter()
            .map(|s| Candidate {
                name: s.info.name.clone(),
                model: s.info.model.clone(),
                vision: s.info.vision,
                provider: Arc::clone(&s.provider),
            })
            .collect()
    }

    fn update(&self, name: &str, change: impl FnOnce(&mut Availability, Instant)) {
        let now = self.clock.now();
        // The source may have been removed while it streamed; its health no longer matters.
        if let Some(s) = self.sources.lock().iter_mut().find(|s| s.info.name == name) {
            change(&mut s.health, now);
        }
    }

    fn mark_unavailable(&self, name: &str, error: &ProviderError) {
        let (mut base, cap) = (self.config.cooldown_base, self.config.cooldown_cap);
        // A source that said when it is back is not asked again before then.
        if let ProviderError::Busy { retry_after, .. } = error {
            base = base.max(*retry_after);
        }
        let cap = cap.max(base);
        self.update(name, |h, now| {
            h.mark_unavailable(now, base, cap, error.to_string());
        });
    }

    /// Up to [`ATTEMPTS_PER_SOURCE`] calls to one source, recording how it went.
    fn try_source(
        &self,
        source: &Candidate,
        request: &ChatRequest,
        cancel: &CancelToken,
        sink: &mut dyn FnMut(StreamChunk),
    ) -> SourceEnd {
        let request = shown_to(
            request_for(request, &source.model),
            source.vision,
            self.images.as_ref(),
        );
        let mut attempt = 1;
        loop {
            if cancel.is_cancelled() {
                return SourceEnd::Stop(ProviderError::Cancelled);
            }
            // What the source asked to wait before the next attempt (`Retry-After`).
            let mut wait = Duration::ZERO;
            match call_gated(&source.name, &*source.provider, &request, cancel, sink) {
                Attempt::Answered => {
                    self.update(&source.name, |h, _| h.reset());
                    return SourceEnd::Answered;
                }
                Attempt::Committed(e) => {
                    if e == ProviderError::Cancelled || cancel.is_cancelled() {
                        return SourceEnd::Stop(ProviderError::Cancelled);
                    }
                    tracing::warn!(source = %source.name, error = %e, "source failed mid-answer; no fallback");
                    self.mark_unavailable(&source.name, &e);
                    return SourceEnd::Stop(e);
                }
                Attempt::Failed(e) => {
                    // A connection error while cancelled is the cancel itself (a hook shut the
                    // socket): repeating the request after a stop would contradict the user.
                    if e == ProviderError::Cancelled || cancel.is_cancelled() {
                        return SourceEnd::Stop(ProviderError::Cancelled);
                    }
                    tracing::warn!(source = %source.name, attempt, error = %e, "source attempt failed");
                    match e {
                        ProviderError::ContextOverflow(_) => return SourceEnd::Stop(e),
                        ProviderError::Status {
                            status: 401 | 403, ..
                        } => {
                            self.update(&source.name, |h, _| h.mark_permanent(e.to_string()));
                            return SourceEnd::Failed(e);
                        }
                        ProviderError::Busy { retry_after, .. }
                            if retry_after > self.config.retry_after_cap =>
                        {
                            self.mark_unavailable(&source.name, &e);
                            return SourceEnd::Failed(e);
                        }
                        _ if attempt == ATTEMPTS_PER_SOURCE => {
                            self.mark_unavailable(&source.name, &e);
                            return SourceEnd::Failed(e);
                        }
                        ProviderError::Busy { retry_after, .. } => wait = retry_after,
                        _ => {}
                    }
                }
            }
            attempt += 1;
            if !pause(cancel, wait.max(self.config.retry_pause)) {
                return SourceEnd::Stop(ProviderError::Cancelled);
            }
        }
    }
}

impl ChatProvider for ProviderManager {
    fn name(&self) -> &str {
        "provider-manager"
    }

    /// The default source's window: its registered `context_window`, else what it reports.
    fn max_context_tokens(&self) -> usize {
        self.sources.lock().first().map_or(0, |s| {
            if s.info.context_window > 0 {
                s.info.context_window
            } else {
                s.provider.max_context_tokens()
            }
        })
    }

    /// Whether the default source takes tool schemas (the one the budget is computed for).
    fn takes_tools(&self) -> bool {
        self.sources
            .lock()
            .first()
            .is_none_or(|s| s.provider.takes_tools())
    }

    fn chat_stream(
        &self,
        request: &ChatRequest,
        cancel: &CancelToken,
        sink: &mut dyn FnMut(StreamChunk),
    ) -> Result<(), ProviderError> {
        let plan = self.plan(&request.model);
        let mut last = None;
        for source in &plan {
            match self.try_source(source, request, cancel, sink) {
                SourceEnd::Answered => return Ok(()),
                SourceEnd::Stop(e) => return Err(e),
                SourceEnd::Failed(e) => last = Some(e),
            }
        }
        match last {
            Some(e) => Err(ProviderError::Other(format!(
                "all {} providers failed, last error: {e}",
                plan.len()
            ))),
            None => Err(ProviderError::Other(NO_SOURCE.into())),
        }
    }
}

/// How one source ended for a call.
enum SourceEnd {
    Answered,
    /// End the whole call with this error; no other source may be tried.
    Stop(ProviderError),
    /// Try the next source.
    Failed(ProviderError),
}

/// The request as one source gets it: SPEC §7.2 defaults, and the source's model when the
/// request leaves the choice to it. The temperature stays open: the source's own setting, or
/// its default, applies (see `LuaSource`).
fn request_for(request: &ChatRequest, source_model: &str) -> ChatRequest {
    let mut request = request.clone();
    if request.max_tokens == 0 {
        request.max_tokens = DEFAULT_MAX_TOKENS;
    }
    if !source_model.is_empty() && (request.model.is_empty() || request.model == AUTO_MODEL) {
        source_model.clone_into(&mut request.model);
    }
    request
}

/// Waits `d` unless `cancel` fires first; false when it did. The wake-up comes from a cancel
/// hook, so a stop during the pause is seen at once rather than at the next poll.
fn pause(cancel: &CancelToken, d: Duration) -> bool {
    if d.is_zero() {
        return !cancel.is_cancelled();
    }
    let (tx, rx) = crossbeam_channel::bounded::<()>(1);
    // The hook stays on the token until it fires; one per pause, so a call leaves at most
    // one per source behind.
    cancel.on_cancel(move || {
        let _ = tx.try_send(());
    });
    match rx.recv_timeout(d) {
        Ok(()) => false,
        Err(_) => !cancel.is_cancelled(),
    }
}

fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// `Ok` when one of `sources` is named `name`; the names there are otherwise.
fn known_source(sources: &[Source], name: &str) -> Result<(), UnknownSource> {
    if sources.iter().any(|s| s.info.name == name) {
        return Ok(());
    }
    Err(UnknownSource {
        name: name.to_owned(),
        known: sources.iter().map(|s| s.info.name.clone()).collect(),
    })
}

#[cfg(test)]
#[path = "manager_tests.rs"]
mod tests;
