//! `server-everything` as a Streamable HTTP server: a session, calls answered as JSON or event
//! streams with progress, a stop withdrawing a long call, and the session ended on disconnect.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use hearth_mcp::{McpServer, McpServerConfig, McpServers};
use hearth_stages::{HandlerError, ToolRegistry};
use hearth_testkit::within;
use serde_json::json;

use crate::{
    LIMIT, eventually, fast_supervisor, npm_server, plain, progress_of, stopped_long_call,
};

struct HttpServer {
    child: Child,
    port: u16,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

impl HttpServer {
    fn start() -> HttpServer {
        HttpServer::on(free_port())
    }

    fn on(port: u16) -> HttpServer {
        let child = Command::new("node")
            .args([&npm_server("server-everything"), "streamableHttp"])
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts");
        assert!(
            eventually(Duration::from_secs(20), || TcpStream::connect((
                "127.0.0.1",
                port
            ))
            .is_ok()),
            "the HTTP server did not listen on {port}"
        );
        HttpServer { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn calls_progress_and_cancellation_over_streamable_http() {
    within(LIMIT, || {
        let http = HttpServer::start();
        let tools = Arc::new(ToolRegistry::new());
        let server = McpServer::new(
            McpServerConfig::http("web", &http.url()),
            Arc::clone(&tools),
        )
        .expect("a valid entry");
        server.connect_http().expect("connects");
        let report = server.report();
        assert!(
            report.connected && report.tools.contains(&"web_echo".to_owned()),
            "{report:?}"
        );

        assert_eq!(
            tools.execute(&plain(), "web_echo", &json!({"message": "over http"})),
            Ok(json!("Echo: over http"))
        );

        let client = server.client().expect("connected");
        assert_eq!(progress_of(&client, 0.4, 2), [json!(1), json!(2)]);

        let (outcome, _) = stopped_long_call(&tools, "web", Duration::from_millis(400));
        assert_eq!(outcome, Err(HandlerError::Cancelled));
        assert_eq!(
            tools.execute(&plain(), "web_echo", &json!({"message": "again"})),
            Ok(json!("Echo: again"))
        );

        server.disconnect("test over");
        assert!(tools.is_empty(), "disconnecting removes the tools");
        let gone = tools.execute(&plain(), "web_echo", &json!({"message": "x"}));
        assert!(
            matches!(gone, Err(HandlerError::Unavailable(_))),
            "{gone:?}"
        );
    });
}

#[test]
fn a_server_that_comes_up_late_is_connected_and_a_lost_session_is_renewed() {
    within(LIMIT, || {
        let port = free_port();
        let tools = Arc::new(ToolRegistry::new());
        let servers = McpServers::new(fast_supervisor(), Arc::clone(&tools));
        let url = format!("http://127.0.0.1:{port}/mcp");
        servers
            .start(McpServerConfig::http("late", &url))
            .expect("a valid entry");
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!servers.get("late").expect("kept").report().connected);
        let first = HttpServer::on(port);
        let report = servers
            .wait_connected("late", Duration::from_secs(20))
            .expect("kept");
        assert!(report.connected, "{report:?}");
        assert_eq!(
            tools.execute(&plain(), "late_echo", &json!({"message": "one"})),
            Ok(json!("Echo: one"))
        );
        // A restarted server has forgotten the session: the next call initializes again.
        drop(first);
        let _second = HttpServer::on(port);
        assert_eq!(
            tools.execute(&plain(), "late_echo", &json!({"message": "two"})),
            Ok(json!("Echo: two"))
        );
        assert!(servers.remove("late"));
        assert!(tools.is_empty());
    });
}
