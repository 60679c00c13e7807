//! The manager's ordering, retries, fallback, cooldowns and first-chunk gate, against scripted
//! sources and a clock the tests move.

use super::*;
use crate::provider::ERROR_FINISH_REASONS;
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

type Behaviour =
    dyn Fn(&CancelToken, &mut dyn FnMut(StreamChunk)) -> Result<(), ProviderError> + Send + Sync;

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
fn run(m: &ProviderManager, req: &ChatRequest) -> (Result<(), ProviderError>, Vec<StreamChunk>) {
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
fn whether_tools_are_sent_is_the_default_sources_answer() {
    let (m, _) = manager();
    assert!(m.takes_tools(), "no source: nothing dropped yet");
    m.register(
        SourceInfo::new("embedded", ""),
        Arc::new(ScriptedProvider::new([]).without_tools()),
    );
    m.register(SourceInfo::new("cloud", "").with_priority(9), scripted([]));
    assert!(!m.takes_tools(), "the default takes none");
    assert!(m.remove("embedded"));
    assert!(m.takes_tools());
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
