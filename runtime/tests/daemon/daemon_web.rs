//! The web channel under a real `hearthd`: the `web` plugin process serves the page's API and
//! the OpenAI-compatible API; answers stream from the event ring; stop cuts them; history
//! comes from the journal and survives a daemon restart; state changes need a session and its
//! CSRF token; wrong passwords are throttled; the API key never comes back; a killed web
//! process is restarted and the answer is still there.

use crate::harness::{Daemon, source, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

pub(crate) const KEY: &str = "hk-test-key-0123456789";
pub(crate) const PASSWORD: &str = "a long test password";

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Presets the web plugin's settings in `dir`: where it listens and, when given, its
/// password; the API key always.
pub(crate) fn preset(dir: &Path, bind: &str, password: Option<&str>) {
    let settings = hearth_settings::Settings::open(dir).expect("settings");
    settings.set("plugin.web.bind", json!(bind)).expect("bind");
    if let Some(password) = password {
        settings
            .set("plugin.web.password", json!(password))
            .expect("password");
    }
    settings.set("plugin.web.api_key", json!(KEY)).expect("key");
}

/// The daemon's config: the bundled web plugin on, the stub model as the source.
pub(crate) fn config(server: &LlmServer) -> String {
    format!(
        "bundled_plugins = true\n{}",
        source("remote", &server.base_url, 0)
    )
}

pub(crate) fn web_binary_is_built() {
    let bin = Path::new(env!("CARGO_BIN_EXE_hearthd"));
    let path = bin.parent().expect("target dir").join("hearth-web");
    assert!(
        path.exists(),
        "{} is missing: run `cargo build -p hearth-plugin-web` first",
        path.display()
    );
}

/// The web plugin's entry in `hearth plugin info web`, once `done` accepts it.
pub(crate) fn wait_info(daemon: &Daemon, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = daemon.run(&["plugin", "info", "web"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if done(&text) {
            return text;
        }
        assert!(Instant::now() < deadline, "web never got there: {text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub(crate) struct Http {
    pub(crate) port: u16,
}

pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: String,
}

impl Answer {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }
}

impl Http {
    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s
    }

    pub(crate) fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> TcpStream {
        let mut s = self.connect();
        let mut req =
            format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        if !body.is_empty() {
            req.push_str("Content-Type: application/json\r\n");
        }
        req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        s.write_all(req.as_bytes()).expect("write");
        s
    }

    pub(crate) fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Answer {
        let mut s = self.send(method, path, headers, body);
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).expect("read");
        let raw = String::from_utf8_lossy(&raw).into_owned();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            dechunk(body)
        } else {
            body.to_owned()
        };
        Answer {
            status,
            head: head.to_owned(),
            body,
        }
    }

    /// Posts `{"password": password}` to `path` (login or first-run setup).
    pub(crate) fn password(&self, path: &str, password: &str) -> Answer {
        self.request(
            "POST",
            path,
            &[],
            &json!({"password": password}).to_string(),
        )
    }

    pub(crate) fn wait_up(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "the web plugin never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || tail.len() < n {
            out.push_str(&tail[..n.min(tail.len())]);
            break;
        }
        out.push_str(&tail[..n]);
        rest = tail[n..].strip_prefix("\r\n").unwrap_or(&tail[n..]);
    }
    out
}

/// Logs in: (cookie header value, csrf token).
pub(crate) fn login(http: &Http) -> (String, String) {
    login_with(http, PASSWORD)
}

fn login_with(http: &Http, password: &str) -> (String, String) {
    let r = http.password("/api/login", password);
    assert_eq!(r.status, 200, "{}", r.body);
    let cookie = r.header("set-cookie").expect("a session cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(cookie.contains("Max-Age=86400"), "{cookie}");
    let pair = cookie.split(';').next().unwrap().to_owned();
    (pair, r.json()["csrf"].as_str().unwrap().to_owned())
}

/// The SSE events of one answer until `done`: (event, id, data).
pub(crate) fn events(
    http: &Http,
    cookie: &str,
    id: &str,
    last: Option<&str>,
) -> Vec<(String, String, Value)> {
    let mut headers = vec![("Cookie", cookie)];
    if let Some(last) = last {
        headers.push(("Last-Event-ID", last));
    }
    let r = http.request("GET", &format!("/api/chat/{id}/events"), &headers, "");
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
        .split("\n\n")
        .filter_map(|frame| {
            let mut ev = (String::new(), String::new(), Value::Null);
            for line in frame.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    ev.0 = v.to_owned();
                } else if let Some(v) = line.strip_prefix("id: ") {
                    ev.1 = v.to_owned();
                } else if let Some(v) = line.strip_prefix("data: ") {
                    ev.2 = serde_json::from_str(v).unwrap_or(Value::Null);
                }
            }
            (!ev.0.is_empty()).then_some(ev)
        })
        .collect()
}

/// Scripts the next answer to stream `pieces` but hold before piece `after` until the
/// returned sender is dropped.
pub(crate) fn gated(
    server: &LlmServer,
    pieces: &[&str],
    after: usize,
) -> crossbeam_channel::Sender<()> {
    let (gate_tx, gate) = crossbeam_channel::bounded::<()>(0);
    server.push(Script::Gated {
        pieces: pieces.iter().map(|p| (*p).to_owned()).collect(),
        after,
        gate,
    });
    gate_tx
}

pub(crate) fn start(server: &LlmServer) -> (Daemon, Http) {
    web_binary_is_built();
    let port = free_port();
    let daemon = Daemon::start_with(&config(server), |dir| {
        preset(dir, &format!("127.0.0.1:{port}"), Some(PASSWORD));
    });
    let http = Http { port };
    http.wait_up();
    (daemon, http)
}

pub(crate) fn chat(http: &Http, cookie: &str, csrf: &str, text: &str) -> String {
    let r = http.request(
        "POST",
        "/api/chat",
        &[("Cookie", cookie), ("X-CSRF-Token", csrf)],
        &json!({"text": text}).to_string(),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["request_id"].as_str().unwrap().to_owned()
}

#[test]
fn a_message_streams_over_sse_replays_after_last_event_id_and_survives_a_daemon_restart() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        server.push(Script::text("one two three four"));
        let (daemon, http) = start(&server);
        let (cookie, csrf) = login(&http);
        let id = chat(&http, &cookie, &csrf, "count to four");
        let all = events(&http, &cookie, &id, None);
        let deltas: Vec<_> = all.iter().filter(|e| e.0 == "delta").collect();
        let text: String = deltas
            .iter()
            .map(|e| e.2["content"].as_str().unwrap())
            .collect();
        assert_eq!(text, "one two three four");
        assert!(deltas.len() >= 4, "streamed token by token: {all:?}");
        let done = all.last().unwrap();
        assert_eq!(done.0, "done");
        assert_eq!(done.2["content"], "one two three four");
        // A reconnect after item 1 gets exactly the items after it: nothing lost, nothing twice.
        let rest = events(&http, &cookie, &id, Some("1"));
        let again: String = rest
            .iter()
            .filter(|e| e.0 == "delta")
            .map(|e| e.2["content"].as_str().unwrap())
            .collect();
        let first_two: String = deltas[..2]
            .iter()
            .map(|e| e.2["content"].as_str().unwrap())
            .collect();
        assert_eq!(format!("{first_two}{again}"), text);
        assert_eq!(rest[0].1, "2");
        // History from the journal, across a daemon restart.
        let dir = daemon.dir.clone();
        let port = http.port;
        daemon.kill9();
        let _daemon = Daemon::restart(&dir, &config(&server));
        let http = Http { port };
        http.wait_up();
        let (cookie, _) = login(&http);
        let h = http.request("GET", "/api/history", &[("Cookie", &cookie)], "");
        assert_eq!(h.status, 200, "{}", h.body);
        let turns = h.json()["turns"].as_array().cloned().unwrap();
        assert_eq!(turns.len(), 1, "{turns:?}");
        assert_eq!(turns[0]["text"], "count to four");
        assert_eq!(turns[0]["reply"], "one two three four");
    });
}

#[test]
fn stop_cuts_the_answer_and_the_openai_api_answers_streamed_and_whole() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let gate_tx = gated(&server, &["never ", "finished ", "text"], 1);
        let (_daemon, http) = start(&server);
        let (cookie, csrf) = login(&http);
        let id = chat(&http, &cookie, &csrf, "talk a lot");
        server.wait_requests(1, Duration::from_secs(20));
        let stop = http.request(
            "POST",
            "/api/stop",
            &[("Cookie", &cookie), ("X-CSRF-Token", &csrf)],
            "",
        );
        assert_eq!(stop.status, 200, "{}", stop.body);
        let all = events(&http, &cookie, &id, None);
        drop(gate_tx);
        let done = &all.last().unwrap().2;
        assert!(
            !done["content"].as_str().unwrap_or("").contains("text"),
            "cut: {done}"
        );

        server.push(Script::text("whole answer"));
        let auth = format!("Bearer {KEY}");
        let body =
            json!({"model": "hearth", "messages": [{"role": "user", "content": "hi"}]}).to_string();
        let r = http.request(
            "POST",
            "/v1/chat/completions",
            &[("Authorization", &auth)],
            &body,
        );
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.json()["choices"][0]["message"]["content"], "whole answer");
        assert!(!r.body.contains(KEY));

        server.push(Script::text("streamed answer"));
        let body = json!({"model": "hearth", "stream": true, "messages": [{"role": "user", "content": "again"}]}).to_string();
        let r = http.request(
            "POST",
            "/v1/chat/completions",
            &[("Authorization", &auth)],
            &body,
        );
        assert_eq!(r.status, 200, "{}", r.body);
        let text: String = r
            .body
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| *d != "[DONE]")
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .filter_map(|v| {
                v["choices"][0]["delta"]["content"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect();
        assert_eq!(text, "streamed answer");
        assert!(r.body.trim_end().ends_with("data: [DONE]"));

        let models = http.request("GET", "/v1/models", &[("Authorization", &auth)], "");
        assert_eq!(models.json()["data"][0]["id"], "hearth");
        let wrong = http.request("GET", "/v1/models", &[("Authorization", "Bearer nope")], "");
        assert_eq!(wrong.status, 401);
        assert_eq!(wrong.json()["error"]["code"], "invalid_api_key");
        let bad = http.request(
            "POST",
            "/v1/chat/completions",
            &[("Authorization", &auth)],
            "{\"messages\": 3}",
        );
        assert_eq!(bad.status, 400);
        assert_eq!(bad.json()["error"]["type"], "invalid_request_error");
    });
}

#[test]
fn state_changes_need_a_session_and_its_csrf_token_and_wrong_passwords_are_throttled() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let (_daemon, http) = start(&server);
        let routes = [
            "/api/chat",
            "/api/stop",
            "/api/logout",
            "/api/plugins/web/reload",
            "/api/sources",
            "/api/sources/remote/remove",
        ];
        let (cookie, csrf) = login(&http);
        for route in routes {
            let body = json!({"text": "x"}).to_string();
            let none = http.request("POST", route, &[], &body);
            assert_eq!(none.status, 403, "{route} without a session: {}", none.body);
            let bad = http.request(
                "POST",
                route,
                &[("Cookie", &cookie), ("X-CSRF-Token", "0bad")],
                &body,
            );
            assert_eq!(
                bad.status, 403,
                "{route} with a bad CSRF token: {}",
                bad.body
            );
            let missing = http.request("POST", route, &[("Cookie", &cookie)], &body);
            assert_eq!(missing.status, 403, "{route} without a CSRF token");
        }
        // A forged cookie is no session.
        let forged = http.request(
            "GET",
            "/api/history",
            &[("Cookie", "hearth_session=99999999999.00")],
            "",
        );
        assert_eq!(forged.status, 403);
        // The plugins listing works with the session, and no answer carries the key.
        for path in [
            "/api/list/plugins",
            "/api/list/status",
            "/api/list/sources",
            "/",
            "/assets/app.js",
        ] {
            let r = http.request("GET", path, &[("Cookie", &cookie)], "");
            assert_eq!(r.status, 200, "{path}: {}", r.body);
            assert!(
                !r.body.contains(KEY) && !r.head.contains(KEY),
                "{path} leaks the key"
            );
        }
        // A source's key goes in and never comes back.
        let secret = "sk-never-echo-4242";
        let add = http.request(
            "POST",
            "/api/sources",
            &[("Cookie", &cookie), ("X-CSRF-Token", &csrf)],
            &json!({"name": "extra", "base_url": "http://127.0.0.1:9/v1", "model": "m",
                "adapter": "openai", "priority": 5, "api_key": secret})
            .to_string(),
        );
        assert_eq!(add.status, 200, "{}", add.body);
        let listed = http.request("GET", "/api/list/sources", &[("Cookie", &cookie)], "");
        assert!(listed.body.contains("\"extra\""), "{}", listed.body);
        let status = http.request("GET", "/api/list/status", &[("Cookie", &cookie)], "");
        for r in [&add, &listed, &status] {
            assert!(
                !r.body.contains(secret),
                "a source key came back: {}",
                r.body
            );
        }
        // The status carries the daemon's footprint.
        let st = status.json();
        assert!(
            st["status"]["daemon"]["rss_kib"].as_u64().unwrap() > 0,
            "{st}"
        );
        assert!(
            st["status"]["daemon"]["threads"].as_u64().unwrap() > 1,
            "{st}"
        );
        assert!(st["status"]["scheduler"].is_object(), "{st}");
        // Assets are served by exact name only.
        for path in [
            "/assets/../Cargo.toml",
            "/assets/%2e%2e%2fplugin.json",
            "/assets/..%2f..%2fetc%2fpasswd",
            "/etc/passwd",
        ] {
            let r = http.request("GET", path, &[], "");
            assert!(r.status == 404 || r.status == 400, "{path}: {}", r.status);
        }
        let _ = csrf;
        for _ in 0..5 {
            let r = http.password("/api/login", "wrong");
            assert_eq!(r.status, 403);
        }
        let r = http.password("/api/login", PASSWORD);
        assert_eq!(
            r.status, 429,
            "throttled even with the right password: {}",
            r.body
        );
        assert!(r.header("retry-after").is_some());
    });
}

#[test]
fn a_killed_web_process_is_restarted_while_the_cli_keeps_answering_and_the_answer_is_kept() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let gate_tx = gated(&server, &["first ", "half, ", "second half"], 2);
        let (daemon, http) = start(&server);
        let (cookie, csrf) = login(&http);
        let id = chat(&http, &cookie, &csrf, "long answer");
        server.wait_requests(1, Duration::from_secs(20));
        let pid = web_pid(&daemon);
        crate::harness::signal(pid as u32, "KILL");
        drop(gate_tx);
        server.push(Script::text("cli still works"));
        let out = daemon.run(&["send", "are you there"]);
        assert!(String::from_utf8_lossy(&out.stdout).contains("cli still works"));
        // The supervisor restarts the web process; the page reconnects and gets the answer.
        std::thread::sleep(Duration::from_millis(1500));
        http.wait_up();
        let all = events(&http, &cookie, &id, Some("0"));
        let done = &all.last().expect("events").2;
        assert_eq!(done["content"], "first half, second half");
    });
}

#[test]
fn a_busy_port_fails_the_start_naming_the_port_and_the_setting() {
    within(Duration::from_secs(60), || {
        web_binary_is_built();
        let held = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = held.local_addr().unwrap().port();
        let server = LlmServer::start();
        let daemon = Daemon::start_with(&config(&server), |dir| {
            preset(dir, &format!("127.0.0.1:{port}"), Some(PASSWORD));
        });
        wait_info(&daemon, |text| {
            text.contains(&format!("127.0.0.1:{port}")) && text.contains("plugin.web.bind")
        });
    });
}

#[test]
fn an_open_address_without_a_password_is_refused_saying_why() {
    within(Duration::from_secs(60), || {
        web_binary_is_built();
        let server = LlmServer::start();
        let port = free_port();
        let daemon = Daemon::start_with(&config(&server), |dir| {
            preset(dir, &format!("0.0.0.0:{port}"), None);
        });
        let text = wait_info(&daemon, |text| text.contains("\"failed\""));
        assert!(text.contains("without a password"), "{text}");
        assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
    });
}

#[test]
fn the_first_run_page_sets_the_password_once() {
    within(Duration::from_secs(60), || {
        web_binary_is_built();
        let server = LlmServer::start();
        let port = free_port();
        let _daemon = Daemon::start_with(&config(&server), |dir| {
            preset(dir, &format!("127.0.0.1:{port}"), None);
        });
        let http = Http { port };
        http.wait_up();
        let s = http.request("GET", "/api/session", &[], "");
        assert_eq!(s.json()["setup_needed"], true);
        let login = http.password("/api/login", PASSWORD);
        assert_eq!(login.status, 403, "no password to log in with yet");
        let short = http.password("/api/setup", "short");
        assert_eq!(short.status, 400);
        let set = http.password("/api/setup", PASSWORD);
        assert_eq!(set.status, 200, "{}", set.body);
        assert!(set.header("set-cookie").is_some());
        let again = http.password("/api/setup", "another long one");
        assert_eq!(again.status, 403, "a second setup would take the page over");
        let (cookie, _) = login_with(&http, PASSWORD);
        let s = http.request("GET", "/api/session", &[("Cookie", &cookie)], "");
        assert_eq!(s.json()["setup_needed"], false);
        assert_eq!(s.json()["logged_in"], true);
    });
}

fn rss_kib(pid: u64) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

fn web_pid(daemon: &Daemon) -> u64 {
    let list = daemon.run(&["plugin", "list"]);
    let plugins: Value = serde_json::from_slice(&list.stdout).expect("json");
    plugins["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "web")
        .and_then(|p| p["pid"].as_u64())
        .expect("web runs")
}

#[test]
fn a_thousand_sse_clients_each_get_the_whole_answer_with_bounded_memory() {
    within(Duration::from_secs(180), || {
        const CLIENTS: usize = 1000;
        let server = LlmServer::start();
        let gate_tx = gated(&server, &["shared ", "by ", "all"], 1);
        let (daemon, http) = start(&server);
        let (cookie, csrf) = login(&http);
        let pid = web_pid(&daemon);
        let id = chat(&http, &cookie, &csrf, "one answer for many");
        server.wait_requests(1, Duration::from_secs(20));
        let before = rss_kib(pid);
        let path = format!("/api/chat/{id}/events");
        let mut streams = Vec::with_capacity(CLIENTS);
        for _ in 0..CLIENTS {
            streams.push(http.send("GET", &path, &[("Cookie", &cookie)], ""));
        }
        // Every client is being served (its headers are out) before the answer goes on.
        for s in &mut streams {
            let mut head = [0u8; 12];
            s.read_exact(&mut head).expect("headers");
            assert!(
                head.starts_with(b"HTTP/1.1 200"),
                "{:?}",
                String::from_utf8_lossy(&head)
            );
        }
        let held = rss_kib(pid);
        drop(gate_tx);
        for s in &mut streams {
            let mut rest = String::new();
            s.read_to_string(&mut rest).expect("read");
            let deltas = rest.matches("event: delta").count();
            assert_eq!(deltas, 3, "each client gets every delta once: {rest}");
            assert!(rest.contains("\"content\":\"shared by all\""), "{rest}");
        }
        let grown = held.saturating_sub(before);
        eprintln!(
            "web RSS: {before} KiB before, {held} KiB with {CLIENTS} SSE clients (+{} B each)",
            grown * 1024 / CLIENTS as u64
        );
        assert!(
            grown < 64 * 1024,
            "{CLIENTS} clients cost {grown} KiB (bound 64 MiB)"
        );
    });
}
