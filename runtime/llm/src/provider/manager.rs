//! One [`ChatProvider`] in front of many sources (SPEC §7.2–§7.4): the turn engine keeps
//! calling a single provider while the manager orders the sources, retries each once, falls
//! back to the next, and keeps per-source health for `hearth status`.
//!
//! Falling back is only harmless while the caller has seen nothing, so a source's stream is
//! held back until its first chunk of substance (the first-chunk check). From then on the call
//! belongs to that source: a later failure is returned as is and never repeated elsewhere,
//! because the user would see the answer start twice.

use super::availability::Availability;
use super::{
    ChatProvider, ChatRequest, Images, MediaReader, NO_SOURCE, ProviderError, StreamChunk, shown_to,
};
use hearth_engine::CancelToken;
use parking_lot::Mutex;
use serde::Serialize;
use std::cmp::Reverse;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Finish reasons that, on a first chunk with nothing else in it, mean the source failed
/// instead of answering: `error` is what gateways send for an upstream failure, and a bare
/// `content_filter` is a refusal that another source may not make.
pub const ERROR_FINISH_REASONS: &[&str] = &["error", "content_filter"];

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
            match call_gated(source, &request, cancel, sink) {
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

/// How one attempt ended, as seen through the first-chunk gate.
enum Attempt {
    Answered,
    /// Failed before the caller saw anything: a retry or fallback is still harmless.
    Failed(ProviderError),
    /// Failed after chunks reached the caller.
    Committed(ProviderError),
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

fn call_gated(
    source: &Candidate,
    request: &ChatRequest,
    cancel: &CancelToken,
    sink: &mut dyn FnMut(StreamChunk),
) -> Attempt {
    let mut gate = FirstChunkGate {
        sink,
        held: Vec::new(),
        state: GateState::Holding,
    };
    // A panicking adapter is a failed source, not a reason to abandon the other sources.
    let result = catch_unwind(AssertUnwindSafe(|| {
        source
            .provider
            .chat_stream(request, cancel, &mut |chunk| gate.push(chunk))
    }))
    .unwrap_or_else(|panic| {
        Err(ProviderError::Other(format!(
            "source {} panicked: {}",
            source.name,
            hearth_engine::panic_message(&*panic)
        )))
    });
    match (gate.state, result) {
        (GateState::Open, Ok(())) => Attempt::Answered,
        (GateState::Open, Err(e)) => Attempt::Committed(e),
        (_, Err(e)) => Attempt::Failed(e),
        (GateState::Rejected(reason), Ok(())) => Attempt::Failed(ProviderError::Other(format!(
            "source {}: first chunk carries only finish_reason {reason:?}",
            source.name
        ))),
        (GateState::Holding, Ok(())) => Attempt::Failed(ProviderError::Other(format!(
            "source {}: empty stream",
            source.name
        ))),
    }
}

enum GateState {
    /// Nothing of substance yet; blank chunks are held.
    Holding,
    /// The caller has been given chunks: no fallback from here.
    Open,
    /// The first chunk of substance was an error finish; the rest of the stream is dropped.
    Rejected(String),
}

/// Holds a stream back until its first chunk of substance (SPEC §7.2). Blank chunks (role
/// announcements, keep-alives, a bare `done`, usage alone) do not count, so a stream of only
/// those is an empty stream; a first chunk whose only news is an error finish reason is a
/// failure; anything else opens the gate and the held chunks follow in order.
struct FirstChunkGate<'a> {
    sink: &'a mut dyn FnMut(StreamChunk),
    held: Vec<StreamChunk>,
    state: GateState,
}

impl FirstChunkGate<'_> {
    fn push(&mut self, chunk: StreamChunk) {
        match self.state {
            GateState::Open => (self.sink)(chunk),
            GateState::Rejected(_) => {}
            GateState::Holding => {
                let visible = !chunk.content.is_empty()
                    || !chunk.reasoning.is_empty()
                    || chunk
                        .tool_calls
                        .iter()
                        .any(|d| !d.id.is_empty() || !d.name.is_empty() || !d.arguments.is_empty());
                match chunk.finish_reason.as_deref() {
                    Some(reason) if !visible && ERROR_FINISH_REASONS.contains(&reason) => {
                        self.state = GateState::Rejected(reason.to_string());
                    }
                    None if !visible => self.held.push(chunk),
                    _ => {
                        self.state = GateState::Open;
                        for held in self.held.drain(..) {
                            (self.sink)(held);
                        }
                        (self.sink)(chunk);
                    }
                }
            }
        }
    }
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
mod tests {
    use super::*;
    use crate::provider::{Message, ScriptStep, ScriptedProvider, ToolCallDelta};

    /// A clock tests move by hand.
    struct ManualClock {
        start: Instant,
        offset: Mutex<Duration>,
    }

    impl ManualClock {
        fn advance(&self, d: Duration) {
            *self.offset.lock() += d;
        }
    }

    impl Clock for ManualClock {
        fn now(&self) -> Instant {
            self.start + *self.offset.lock()
        }
    }

    type Behaviour = dyn Fn(&CancelToken, &mut dyn FnMut(StreamChunk)) -> Result<(), ProviderError>
        + Send
        + Sync;

    /// A provider whose every call runs the same closure; records when it was called.
    struct FnProvider {
        calls: Mutex<Vec<Instant>>,
        behaviour: Box<Behaviour>,
    }

    impl FnProvider {
        fn new(
            behaviour: impl Fn(&CancelToken, &mut dyn FnMut(StreamChunk)) -> Result<(), ProviderError>
            + Send
            + Sync
            + 'static,
        ) -> Arc<Self> {
            Arc::new(Self {
                calls: Mutex::new(Vec::new()),
                behaviour: Box::new(behaviour),
            })
        }

        fn count(&self) -> usize {
            self.calls.lock().len()
        }
    }

    impl ChatProvider for FnProvider {
        fn name(&self) -> &str {
            "fn"
        }

        fn chat_stream(
            &self,
            _: &ChatRequest,
            cancel: &CancelToken,
            sink: &mut dyn FnMut(StreamChunk),
        ) -> Result<(), ProviderError> {
            self.calls.lock().push(Instant::now());
            (self.behaviour)(cancel, sink)
        }
    }

    const SECOND: Duration = Duration::from_secs(1);

    fn fast() -> ManagerConfig {
        ManagerConfig {
            retry_pause: Duration::ZERO,
            ..ManagerConfig::default()
        }
    }

    fn manager_with(config: ManagerConfig) -> (ProviderManager, Arc<ManualClock>) {
        let clock = Arc::new(ManualClock {
            start: Instant::now(),
            offset: Mutex::new(Duration::ZERO),
        });
        (ProviderManager::with_clock(config, clock.clone()), clock)
    }

    fn manager() -> (ProviderManager, Arc<ManualClock>) {
        manager_with(fast())
    }

    fn scripted(steps: impl IntoIterator<Item = ScriptStep>) -> Arc<ScriptedProvider> {
        Arc::new(ScriptedProvider::new(steps))
    }

    fn status(code: u16) -> ScriptStep {
        ScriptStep::Fail(ProviderError::Status {
            status: code,
            body: format!("status {code}"),
        })
    }

    fn stream(chunks: Vec<StreamChunk>) -> ScriptStep {
        ScriptStep::Stream {
            chunks,
            delay: Duration::ZERO,
        }
    }

    fn finish(reason: Option<&str>) -> StreamChunk {
        StreamChunk {
            finish_reason: reason.map(str::to_string),
            done: true,
            ..StreamChunk::default()
        }
    }

    fn request(model: &str) -> ChatRequest {
        let mut r = ChatRequest::new(vec![Message::user("hi")], vec![]);
        r.model = model.to_string();
        r
    }

    /// Runs one call; returns the result and every chunk the caller's sink received.
    fn run(
        m: &ProviderManager,
        req: &ChatRequest,
    ) -> (Result<(), ProviderError>, Vec<StreamChunk>) {
        let mut seen = Vec::new();
        let result = m.chat_stream(req, &CancelToken::new(), &mut |c| seen.push(c));
        (result, seen)
    }

    fn text(chunks: &[StreamChunk]) -> String {
        chunks.iter().map(|c| c.content.as_str()).collect()
    }

    fn status_of(m: &ProviderManager, name: &str) -> SourceStatus {
        m.sources()
            .into_iter()
            .find(|s| s.name == name)
            .expect("source is registered")
    }

    /// The shared watchdog at the 5 s these tests allow.
    fn watchdog<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> T {
        hearth_testkit::within(Duration::from_secs(5), body)
    }

    #[test]
    fn order_is_model_then_priority_then_default_then_name() {
        let (m, _) = manager();
        for (name, model, priority) in [
            ("d", "m1", 0),
            ("b", "m2", 5),
            ("a", "m2", 5),
            ("c", "m1", 0),
            ("e", "x", 0),
        ] {
            m.register(
                SourceInfo::new(name, model).with_priority(priority),
                scripted([]),
            );
        }
        assert_eq!(m.candidates(""), ["a", "b", "d", "c", "e"]);
        assert_eq!(m.candidates("AUTO"), ["a", "b", "d", "c", "e"]);
        assert_eq!(m.candidates("x"), ["e", "a", "b", "d", "c"]);
        assert_eq!(m.candidates("m1"), ["d", "c", "a", "b", "e"]);
        assert_eq!(m.candidates("unknown"), ["a", "b", "d", "c", "e"]);
    }

    #[test]
    fn a_preferred_source_goes_first_while_it_is_available_and_a_named_model_still_wins() {
        let (m, clock) = manager();
        m.register(SourceInfo::new("local", "small"), scripted([]));
        m.register(
            SourceInfo::new("cloud", "big").with_priority(5),
            scripted([]),
        );
        m.register(SourceInfo::new("spare", "small"), scripted([]));
        assert_eq!(m.current().as_deref(), Some("cloud"));
        let e = m.prefer(Some("nope")).expect_err("unknown");
        assert_eq!(e.known, ["local", "cloud", "spare"]);
        m.prefer(Some("spare")).expect("known");
        assert_eq!(m.candidates(""), ["spare", "cloud", "local"]);
        assert_eq!(m.current().as_deref(), Some("spare"));
        assert_eq!(m.candidates("big"), ["cloud", "spare", "local"]);
        assert!(status_of(&m, "spare").preferred && !status_of(&m, "cloud").preferred);
        m.mark_unavailable("spare", &ProviderError::Other("down".into()));
        assert_eq!(m.current().as_deref(), Some("cloud"), "cooling: skipped");
        clock.advance(31 * SECOND);
        assert_eq!(m.current().as_deref(), Some("spare"), "back once it cooled");
        m.prefer(None).expect("back to priority");
        assert_eq!(m.candidates(""), ["cloud", "local", "spare"]);
    }

    #[test]
    fn cooling_sources_are_skipped_and_the_default_is_the_last_resort() {
        let (m, clock) = manager();
        m.register(SourceInfo::new("main", ""), scripted([]));
        m.register(SourceInfo::new("spare", "").with_priority(1), scripted([]));
        let e = ProviderError::Other("down".into());
        m.mark_unavailable("spare", &e);
        assert_eq!(m.candidates(""), ["main"]);
        m.mark_unavailable("main", &e);
        assert_eq!(
            m.candidates(""),
            ["main"],
            "nothing available: the default anyway"
        );
        clock.advance(31 * SECOND);
        assert_eq!(m.candidates(""), ["spare", "main"]);
    }

    #[test]
    fn server_error_is_retried_once_then_falls_back_and_cools_down() {
        let (m, clock) = manager();
        let a = scripted([status(500), status(500)]);
        let b = scripted([ScriptStep::text("from b"), ScriptStep::text("b again")]);
        m.register(SourceInfo::new("a", ""), a.clone());
        m.register(SourceInfo::new("b", ""), b.clone());

        let (result, seen) = run(&m, &request(""));
        assert_eq!(result, Ok(()));
        assert_eq!(text(&seen), "from b");
        assert_eq!((a.request_count(), b.request_count()), (2, 1));
        let sa = status_of(&m, "a");
        assert!(!sa.available && !sa.permanent);
        assert_eq!((sa.fail_count, sa.unavailable_until), (1, Some(30)));
        assert_eq!(sa.last_error.as_deref(), Some("api error 500: status 500"));
        assert!(status_of(&m, "b").available);

        let (result, seen) = run(&m, &request(""));
        assert_eq!((result, text(&seen)), (Ok(()), "b again".to_string()));
        assert_eq!(a.request_count(), 2, "a is cooling down and skipped");

        clock.advance(30 * SECOND + Duration::from_millis(1));
        let (result, seen) = run(&m, &request(""));
        assert_eq!((result, text(&seen)), (Ok(()), "echo: hi".to_string()));
        assert_eq!((a.request_count(), b.request_count()), (3, 2));
        let sa = status_of(&m, "a");
        assert!(sa.available);
        assert_eq!(
            (sa.fail_count, sa.unavailable_until, sa.last_error),
            (0, None, None)
        );
    }

    #[test]
    fn second_attempt_waits_the_retry_pause() {
        let pause = Duration::from_millis(80);
        let (m, _) = manager_with(ManagerConfig {
            retry_pause: pause,
            ..ManagerConfig::default()
        });
        let a = FnProvider::new(|_, _| Err(ProviderError::Other("refused".into())));
        m.register(SourceInfo::new("a", ""), a.clone());
        let (result, _) = watchdog(move || run(&m, &request("")));
        assert!(result.is_err());
        let calls = a.calls.lock().clone();
        assert_eq!(calls.len(), 2);
        assert!(
            calls[1] - calls[0] >= pause,
            "gap {:?}",
            calls[1] - calls[0]
        );
    }

    #[test]
    fn rejected_credentials_block_the_source_for_good_without_retry() {
        for code in [401, 403] {
            let (m, clock) = manager();
            let a = scripted([status(code)]);
            let b = scripted([]);
            m.register(SourceInfo::new("a", ""), a.clone());
            m.register(SourceInfo::new("b", ""), b.clone());
            let (result, _) = run(&m, &request(""));
            assert_eq!(result, Ok(()));
            assert_eq!(
                (a.request_count(), b.request_count()),
                (1, 1),
                "{code}: no retry"
            );
            let sa = status_of(&m, "a");
            assert!(sa.permanent && !sa.available, "{code}");
            assert_eq!(sa.unavailable_until, None);
            assert_eq!(sa.fail_count, 0, "{code}: not a cooldown");
            assert!(
                sa.last_error
                    .as_deref()
                    .is_some_and(|e| e.contains(&code.to_string()))
            );
            clock.advance(100 * 3600 * SECOND);
            assert_eq!(m.candidates(""), ["b"], "{code}: still blocked after 100 h");
        }
    }

    #[test]
    fn cooldown_doubles_per_failure_and_is_capped() {
        let (m, clock) = manager();
        let a = FnProvider::new(|_, _| {
            Err(ProviderError::Status {
                status: 503,
                body: "busy".into(),
            })
        });
        m.register(SourceInfo::new("a", ""), a.clone());
        m.register(SourceInfo::new("b", ""), scripted([]));
        let mut seen = Vec::new();
        for _ in 0..9 {
            let (result, _) = run(&m, &request(""));
            assert_eq!(result, Ok(()));
            let sa = status_of(&m, "a");
            let left = sa.unavailable_until.expect("cooling down");
            seen.push(left);
            // Still unavailable at the end of the cooldown, tried again just after it.
            clock.advance(Duration::from_secs(left));
            assert_eq!(m.candidates(""), ["b"]);
            clock.advance(Duration::from_millis(1));
        }
        assert_eq!(seen, [30, 60, 120, 240, 480, 960, 1800, 1800, 1800]);
        assert_eq!(status_of(&m, "a").fail_count, 9);
        assert_eq!(a.count(), 18);
    }

    #[test]
    fn cancel_during_retry_pause_returns_at_once() {
        let (m, _) = manager_with(ManagerConfig {
            retry_pause: Duration::from_secs(10),
            ..ManagerConfig::default()
        });
        let a = scripted([status(500)]);
        let b = scripted([]);
        m.register(SourceInfo::new("a", ""), a.clone());
        m.register(SourceInfo::new("b", ""), b.clone());
        let cancel = CancelToken::new();
        let canceller = {
            let cancel = cancel.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                let at = Instant::now();
                cancel.cancel();
                at
            })
        };
        let m = Arc::new(m);
        let runner = Arc::clone(&m);
        let (result, ended) = watchdog(move || {
            let r = runner.chat_stream(&request(""), &cancel, &mut |_| {});
            (r, Instant::now())
        });
        let cancelled_at = canceller.join().expect("canceller thread");
        assert_eq!(result, Err(ProviderError::Cancelled));
        let lag = ended.saturating_duration_since(cancelled_at);
        assert!(
            lag < Duration::from_millis(250),
            "returned {lag:?} after the cancel"
        );
        assert_eq!((a.request_count(), b.request_count()), (1, 0));
        assert_eq!(
            status_of(&m, "a").fail_count,
            0,
            "a stop is not the source's fault"
        );
    }

    #[test]
    fn cancellation_never_falls_back() {
        // The source reports the cancel itself.
        let (m, _) = manager();
        let a = scripted([ScriptStep::Fail(ProviderError::Cancelled)]);
        let b = scripted([]);
        m.register(SourceInfo::new("a", ""), a.clone());
        m.register(SourceInfo::new("b", ""), b.clone());
        assert_eq!(run(&m, &request("")).0, Err(ProviderError::Cancelled));
        assert_eq!((a.request_count(), b.request_count()), (1, 0));

        // The cancel hook broke the connection, so the source reports a connection error; on
        // the last attempt, where nothing else would notice the stop before the next source.
        let (m, _) = manager();
        let calls = Arc::new(Mutex::new(0));
        let a = FnProvider::new(move |cancel, _| {
            let mut calls = calls.lock();
            *calls += 1;
            if *calls == 2 {
                cancel.cancel();
            }
            Err(ProviderError::Other("connection reset".into()))
        });
        let b = scripted([]);
        m.register(SourceInfo::new("a", ""), a.clone());
        m.register(SourceInfo::new("b", ""), b.clone());
        assert_eq!(run(&m, &request("")).0, Err(ProviderError::Cancelled));
        assert_eq!((a.count(), b.request_count()), (2, 0));
        assert_eq!(
            status_of(&m, "a").fail_count,
            0,
            "a stop is not the source's fault"
        );
    }

    #[test]
    fn context_overflow_fails_fast() {
        let (m, _) = manager();
        let overflow = ProviderError::ContextOverflow("prompt too long".into());
        let a = scripted([ScriptStep::Fail(overflow.clone())]);
        let b = scripted([]);
        m.register(SourceInfo::new("a", ""), a.clone());
        m.register(SourceInfo::new("b", ""), b.clone());
        assert_eq!(run(&m, &request("")).0, Err(overflow));
        assert_eq!((a.request_count(), b.request_count()), (1, 0));
        assert!(
            status_of(&m, "a").available,
            "the request was at fault, not the source"
        );
    }

    #[test]
    fn empty_stream_falls_back() {
        // Truly empty, and only blank chunks (a role announcement, then a bare done).
        for chunks in [vec![], vec![StreamChunk::default(), finish(None)]] {
            let (m, _) = manager();
            let a = scripted([stream(chunks.clone()), stream(chunks)]);
            let b = scripted([ScriptStep::text("b")]);
            m.register(SourceInfo::new("a", ""), a.clone());
            m.register(SourceInfo::new("b", ""), b.clone());
            let (result, seen) = run(&m, &request(""));
            assert_eq!(result, Ok(()));
            assert_eq!((a.request_count(), b.request_count()), (2, 1));
            assert_eq!(seen.len(), 2, "only b's chunks reach the caller: {seen:?}");
            assert_eq!(text(&seen), "b");
            assert!(
                status_of(&m, "a")
                    .last_error
                    .is_some_and(|e| e.contains("empty stream"))
            );
        }
    }

    #[test]
    fn error_only_first_chunk_falls_back_and_is_not_forwarded() {
        for reason in ERROR_FINISH_REASONS {
            let (m, _) = manager();
            let bad = vec![StreamChunk::default(), finish(Some(reason))];
            let a = scripted([stream(bad.clone()), stream(bad)]);
            let b = scripted([ScriptStep::text("fine")]);
            m.register(SourceInfo::new("a", ""), a.clone());
            m.register(SourceInfo::new("b", ""), b.clone());
            let (result, seen) = run(&m, &request(""));
            assert_eq!(result, Ok(()));
            assert_eq!(b.request_count(), 1, "{reason}");
            assert_eq!(text(&seen), "fine");
            assert_eq!(seen.len(), 2, "{reason}: a's chunks withheld: {seen:?}");
            assert!(
                seen.iter()
                    .all(|c| c.finish_reason.as_deref() != Some(reason))
            );
        }
    }

    #[test]
    fn held_chunks_are_released_in_order_once_the_answer_starts() {
        let (m, _) = manager();
        let call = StreamChunk {
            tool_calls: vec![ToolCallDelta {
                stream_index: 0,
                id: "c1".into(),
                name: "t".into(),
                arguments: String::new(),
            }],
            ..StreamChunk::default()
        };
        let role = StreamChunk::default();
        // A tool call is substance; so is a plain "stop" with no text (an empty answer).
        for chunks in [
            vec![role.clone(), call, finish(Some("tool_calls"))],
            vec![role, finish(Some("stop"))],
        ] {
            let a = scripted([stream(chunks.clone())]);
            let b = scripted([]);
            m.register(SourceInfo::new("a", ""), a);
            m.register(SourceInfo::new("b", ""), b.clone());
            let (result, seen) = run(&m, &request(""));
            assert_eq!(result, Ok(()));
            assert_eq!(seen, chunks);
            assert_eq!(b.request_count(), 0);
        }
    }

    #[test]
    fn failure_after_the_first_chunk_does_not_fall_back() {
        let (m, _) = manager();
        let a = FnProvider::new(|_, sink| {
            sink(StreamChunk::text("Hel"));
            Err(ProviderError::Other("connection reset".into()))
        });
        let b = scripted([]);
        m.register(SourceInfo::new("a", ""), a.clone());
        m.register(SourceInfo::new("b", ""), b.clone());
        let (result, seen) = run(&m, &request(""));
        assert_eq!(result, Err(ProviderError::Other("connection reset".into())));
        assert_eq!(text(&seen), "Hel", "not repeated");
        assert_eq!((a.count(), b.request_count()), (1, 0));
        assert_eq!(status_of(&m, "a").fail_count, 1);
    }

    #[test]
    fn panicking_source_falls_back() {
        let (m, _) = manager();
        let a = scripted([
            ScriptStep::Panic("adapter bug".into()),
            ScriptStep::Panic("adapter bug".into()),
        ]);
        let b = scripted([ScriptStep::text("ok")]);
        m.register(SourceInfo::new("a", ""), a);
        m.register(SourceInfo::new("b", ""), b);
        let (result, seen) = run(&m, &request(""));
        assert_eq!((result, text(&seen)), (Ok(()), "ok".to_string()));
        let err = status_of(&m, "a").last_error.expect("recorded");
        assert!(err.contains("panicked: adapter bug"), "{err}");
    }

    #[test]
    fn all_failing_names_the_count_and_the_last_error_in_call_order() {
        let (m, _) = manager();
        let log = Arc::new(Mutex::new(Vec::new()));
        for (name, priority, code) in [("a", 0, 500u16), ("b", 1, 502)] {
            let log = Arc::clone(&log);
            let p = FnProvider::new(move |_, _| {
                log.lock().push(name);
                Err(ProviderError::Status {
                    status: code,
                    body: format!("{name} down"),
                })
            });
            m.register(SourceInfo::new(name, "").with_priority(priority), p);
        }
        let (result, seen) = run(&m, &request(""));
        assert_eq!(
            result,
            Err(ProviderError::Other(
                "all 2 providers failed, last error: api error 500: a down".into()
            ))
        );
        assert!(seen.is_empty());
        assert_eq!(*log.lock(), ["b", "b", "a", "a"]);
    }

    #[test]
    fn no_source_says_so() {
        let (m, _) = manager();
        assert_eq!(
            run(&m, &request("")).0,
            Err(ProviderError::Other(NO_SOURCE.into()))
        );
    }

    #[test]
    fn defaults_and_the_source_model_are_applied_per_source() {
        let (m, _) = manager();
        let a = scripted([]);
        m.register(SourceInfo::new("a", "model-a"), a.clone());
        let mut bare = request("");
        bare.max_tokens = 0;
        bare.temperature = None;
        let mut auto = bare.clone();
        auto.model = "AUTO".into();
        let mut explicit = request("model-x");
        explicit.temperature = Some(0.2);
        explicit.max_tokens = 100;
        for r in [&bare, &auto, &explicit] {
            assert_eq!(run(&m, r).0, Ok(()));
        }
        let got: Vec<(String, Option<f64>, u32)> = a
            .requests()
            .into_iter()
            .map(|r| (r.model, r.temperature, r.max_tokens))
            .collect();
        assert_eq!(
            got,
            [
                ("model-a".into(), None, 4096),
                ("model-a".into(), None, 4096),
                ("model-x".into(), Some(0.2), 100),
            ]
        );
        assert_eq!(a.requests()[0].messages, bare.messages);

        // A source without a model leaves the request's model alone.
        let (m, _) = manager();
        let b = scripted([]);
        m.register(SourceInfo::new("b", ""), b.clone());
        assert_eq!(run(&m, &request("AUTO")).0, Ok(()));
        assert_eq!(b.requests()[0].model, "AUTO");
    }

    #[test]
    fn default_follows_registration_order() {
        let (m, _) = manager();
        assert_eq!(m.max_context_tokens(), 0);
        m.register(
            SourceInfo::new("first", "").with_context_window(8192),
            scripted([]),
        );
        m.register(
            SourceInfo::new("second", "").with_priority(9),
            Arc::new(ScriptedProvider::new([]).with_max_context(32_768)),
        );
        assert_eq!(
            m.max_context_tokens(),
            8192,
            "the default, not the highest priority"
        );
        assert!(status_of(&m, "first").is_default && !status_of(&m, "second").is_default);
        assert!(m.remove("first"));
        assert!(!m.remove("first"));
        assert_eq!(
            m.max_context_tokens(),
            32_768,
            "window unknown: asked the provider"
        );
        assert!(status_of(&m, "second").is_default);
    }

    #[test]
    fn registering_a_name_again_replaces_it_and_clears_its_health() {
        let (m, _) = manager();
        m.register(SourceInfo::new("a", "old"), scripted([status(401)]));
        m.register(SourceInfo::new("z", ""), scripted([]));
        assert_eq!(run(&m, &request("")).0, Ok(()));
        assert!(status_of(&m, "a").permanent);
        let fresh = scripted([]);
        m.register(SourceInfo::new("a", "new"), fresh.clone());
        let names: Vec<String> = m.sources().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["a", "z"], "kept its place as the default");
        let sa = status_of(&m, "a");
        assert!(sa.available && !sa.permanent && sa.model == "new");
        assert_eq!(run(&m, &request("")).0, Ok(()));
        assert_eq!(fresh.request_count(), 1);
    }
}
