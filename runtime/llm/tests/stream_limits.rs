//! A streamed call against real loopback HTTP servers that misbehave: silent after the head,
//! dripping bytes, never ending, cut off, rate-limiting. Each must end the attempt with an
//! error the manager falls back on, within the source's limits.

use hearth_engine::CancelToken;
use hearth_llm::adapter::{Adapter, bundled};
use hearth_llm::http::HttpClient;
use hearth_llm::provider::{
    ChatProvider, ChatRequest, LuaSource, ManagerConfig, Message, ProviderError, ProviderManager,
    SourceConfig, SourceInfo, StreamChunk,
};
use hearth_testkit::within;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Behaviour = Box<dyn FnOnce(TcpStream) + Send>;

/// A loopback server answering its n-th request with the n-th behaviour (the last one repeats
/// as a plain answer); records when each request arrived.
struct Server {
    base_url: String,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Server {
    fn start(behaviours: Vec<Behaviour>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base_url = format!("http://{}/v1", listener.local_addr().expect("addr"));
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let seen = arrivals.clone();
        std::thread::spawn(move || {
            let mut behaviours = behaviours.into_iter();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                read_request(&mut stream);
                seen.lock().expect("arrivals").push(Instant::now());
                let behaviour = behaviours
                    .next()
                    .unwrap_or_else(|| Box::new(answer("late")));
                std::thread::spawn(move || behaviour(stream));
            }
        });
        Self { base_url, arrivals }
    }

    fn arrivals(&self) -> Vec<Instant> {
        self.arrivals.lock().expect("arrivals").clone()
    }
}

fn read_request(stream: &mut TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
}

const SSE_HEAD: &str =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";

fn event(text: &str) -> String {
    format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}},\"finish_reason\":null}}]}}\n\n"
    )
}

fn finish() -> String {
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
        .to_owned()
}

/// A complete, well-formed answer.
fn answer(text: &'static str) -> impl FnOnce(TcpStream) + Send {
    move |mut s| {
        let _ = write!(s, "{SSE_HEAD}{}{}", event(text), finish());
    }
}

/// The head, then nothing until the client goes away.
fn silent_after_head(mut s: TcpStream) {
    let _ = s.write_all(SSE_HEAD.as_bytes());
    let mut buf = [0u8; 64];
    while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
}

fn source(name: &str, base_url: &str, tune: impl FnOnce(&mut SourceConfig)) -> Arc<LuaSource> {
    let mut cfg = SourceConfig {
        name: name.into(),
        base_url: base_url.into(),
        model: "m".into(),
        adapter: "openai".into(),
        ..SourceConfig::default()
    };
    tune(&mut cfg);
    cfg.validate().expect("valid source");
    let adapter = Adapter::load("openai.lua", bundled::source("openai").expect("bundled"))
        .expect("adapter loads");
    Arc::new(LuaSource::new(cfg, Arc::new(adapter), HttpClient::new()))
}

fn request() -> ChatRequest {
    ChatRequest::new(vec![Message::user("hi")], Vec::new())
}

fn call(provider: &dyn ChatProvider) -> (Result<(), ProviderError>, String) {
    let mut text = String::new();
    let result = provider.chat_stream(&request(), &CancelToken::new(), &mut |c: StreamChunk| {
        text.push_str(&c.content)
    });
    (result, text)
}

fn manager() -> ProviderManager {
    ProviderManager::new(ManagerConfig {
        retry_pause: Duration::ZERO,
        ..ManagerConfig::default()
    })
}

/// A manager trying `first` (named `name`), then a source on `fallback_url`.
fn with_fallback(name: &str, first: Arc<LuaSource>, fallback_url: &str) -> ProviderManager {
    let m = manager();
    m.register(SourceInfo::new(name, "m").with_priority(10), first);
    m.register(
        SourceInfo::new("good", "m"),
        source("good", fallback_url, |_| {}),
    );
    m
}

#[test]
fn silence_after_the_head_times_out_and_the_next_source_answers() {
    within(Duration::from_secs(20), || {
        let silent = Server::start(vec![
            Box::new(silent_after_head),
            Box::new(silent_after_head),
        ]);
        let good = Server::start(vec![Box::new(answer("fallback"))]);
        let first = source("silent", &silent.base_url, |c| {
            c.first_byte_timeout = Some(0.3)
        });
        let m = with_fallback("silent", first, &good.base_url);
        let started = Instant::now();
        let (result, text) = call(&m);
        assert_eq!(result, Ok(()));
        assert_eq!(text, "fallback");
        // Two attempts on the silent source, each cut at its 300 ms first-event limit.
        assert_eq!(silent.arrivals().len(), 2);
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(600), "{took:?}");
        assert!(took < Duration::from_secs(3), "{took:?}");
        let status = m.sources();
        let last = status[0].last_error.clone().unwrap_or_default();
        assert!(last.contains("no first event within 300 ms"), "{last}");
    });
}

#[test]
fn a_server_dripping_one_byte_at_a_time_hits_the_idle_limit() {
    within(Duration::from_secs(20), || {
        let server = Server::start(vec![Box::new(|mut s: TcpStream| {
            let _ = write!(s, "{SSE_HEAD}{}", event("first "));
            for byte in event("never whole").bytes() {
                std::thread::sleep(Duration::from_millis(50));
                if s.write_all(&[byte]).is_err() {
                    return;
                }
            }
        })]);
        let src = source("drip", &server.base_url, |c| c.idle_timeout = Some(0.4));
        let started = Instant::now();
        let (result, text) = call(&*src);
        let took = started.elapsed();
        let Err(ProviderError::Other(msg)) = result else {
            panic!("expected an idle timeout, got {result:?}")
        };
        assert!(msg.contains("no event within 400 ms"), "{msg}");
        assert_eq!(text, "first ");
        assert!(took >= Duration::from_millis(400), "{took:?}");
        assert!(took < Duration::from_millis(1500), "{took:?}");
    });
}

#[test]
fn a_stream_that_never_ends_hits_the_total_limit() {
    within(Duration::from_secs(20), || {
        let server = Server::start(vec![Box::new(|mut s: TcpStream| {
            let _ = s.write_all(SSE_HEAD.as_bytes());
            while s.write_all(event("more ").as_bytes()).is_ok() {
                std::thread::sleep(Duration::from_millis(10));
            }
        })]);
        let src = source("endless", &server.base_url, |c| c.total_timeout = Some(0.5));
        let started = Instant::now();
        let (result, text) = call(&*src);
        let took = started.elapsed();
        let Err(ProviderError::Other(msg)) = result else {
            panic!("expected a total timeout, got {result:?}")
        };
        assert!(msg.contains("stream not finished within 500 ms"), "{msg}");
        assert!(text.starts_with("more more "), "{text}");
        assert!(took >= Duration::from_millis(500), "{took:?}");
        assert!(took < Duration::from_millis(1500), "{took:?}");
    });
}

#[test]
fn a_stream_cut_without_finish_reason_or_done_is_an_error_not_an_answer() {
    within(Duration::from_secs(20), || {
        let server = Server::start(vec![
            Box::new(|mut s: TcpStream| {
                let _ = write!(s, "{SSE_HEAD}{}{}", event("half "), event("an answer"));
            }),
            // A finish reason without `[DONE]` is a complete answer.
            Box::new(|mut s: TcpStream| {
                let _ = write!(
                    s,
                    "{SSE_HEAD}{}data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}]}}\n\n",
                    event("whole")
                );
            }),
        ]);
        let src = source("cut", &server.base_url, |_| {});
        let (result, text) = call(&*src);
        let Err(ProviderError::Other(msg)) = result else {
            panic!("expected a cut-off error, got {result:?}")
        };
        assert!(msg.contains("cut off"), "{msg}");
        // The partial text reached the sink (visible as a partial), but the call failed.
        assert_eq!(text, "half an answer");
        let (result, text) = call(&*src);
        assert_eq!(result, Ok(()));
        assert_eq!(text, "whole");
    });
}

fn busy(retry_after: &'static str) -> impl FnOnce(TcpStream) + Send {
    move |mut s| {
        let body = r#"{"error":{"message":"slow down"}}"#;
        let _ = write!(
            s,
            "HTTP/1.1 429 Too Many Requests\r\nRetry-After: {retry_after}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
    }
}

#[test]
fn retry_after_on_429_is_waited_before_the_second_attempt() {
    within(Duration::from_secs(20), || {
        let server = Server::start(vec![Box::new(busy("1")), Box::new(answer("patient"))]);
        let m = manager();
        m.register(
            SourceInfo::new("busy", "m"),
            source("busy", &server.base_url, |_| {}),
        );
        let (result, text) = call(&m);
        assert_eq!(result, Ok(()));
        assert_eq!(text, "patient");
        let arrivals = server.arrivals();
        assert_eq!(arrivals.len(), 2);
        let gap = arrivals[1] - arrivals[0];
        // The retry pause is zero here: only the header can have made it wait.
        assert!(gap >= Duration::from_secs(1), "retried after {gap:?}");
        assert!(gap < Duration::from_secs(3), "retried after {gap:?}");
    });
}

#[test]
fn a_retry_after_longer_than_the_cap_falls_back_at_once() {
    within(Duration::from_secs(20), || {
        let busy_server = Server::start(vec![Box::new(busy("120"))]);
        let good = Server::start(vec![Box::new(answer("elsewhere"))]);
        let first = source("busy", &busy_server.base_url, |_| {});
        let m = with_fallback("busy", first, &good.base_url);
        let started = Instant::now();
        let (result, text) = call(&m);
        assert_eq!(result, Ok(()));
        assert_eq!(text, "elsewhere");
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(busy_server.arrivals().len(), 1, "not retried");
        // It cools down for at least as long as it asked.
        let status = m.sources();
        assert!(
            status[0].unavailable_until.is_some_and(|s| s >= 119),
            "{status:?}"
        );
    });
}
