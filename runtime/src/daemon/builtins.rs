//! Tools every daemon has, whatever plugins are loaded.

use hearth_stages::{ToolDef, ToolRegistry, tool_fn};
use serde_json::{Value, json};

/// Registers the built-in tools. `zone` places local time.
pub fn register(tools: &ToolRegistry, zone: hearth_engine::LocalZone) {
    let def = ToolDef {
        name: "system_time".into(),
        plugin: "system".into(),
        description: "The current date and time on the machine Hearth runs on.".into(),
        parameters: json!({"type": "object", "properties": {}}),
        parallel_safe: true,
        no_memory: true,
        ..ToolDef::default()
    };
    // Built in, so offered with every request however many tools plugins add.
    let registered = tools.register_owned(
        def,
        hearth_stages::ToolOwner::builtin(),
        hearth_stages::DEFAULT_CAPABILITY,
        tool_fn(move |_: &Value| {
            let now = hearth_engine::now_ms();
            let unix = now.div_euclid(1_000);
            let utc_offset_secs = zone.offset_at(now);
            Ok(json!({"local": iso8601(unix + utc_offset_secs), "utc_offset_secs": utc_offset_secs, "unix": unix}))
        }),
    );
    if let Err(e) = registered {
        tracing::error!("built-in tool system_time: {e}");
    }
}

/// `YYYY-MM-DDTHH:MM:SS` of a Unix time (proleptic Gregorian, days-from-civil inverse).
pub fn iso8601(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00");
        assert_eq!(iso8601(1_796_031_296), "2026-11-30T09:34:56");
        assert_eq!(iso8601(-1), "1969-12-31T23:59:59");
    }

    #[test]
    fn system_time_tool_answers() {
        let tools = ToolRegistry::new();
        register(&tools, hearth_engine::LocalZone::fixed(3600));
        let call = hearth_stages::CallContext::kernel(std::time::Duration::from_secs(5));
        let out = tools
            .execute(&call, "system_time", &json!({}))
            .expect("runs");
        assert_eq!(out["utc_offset_secs"], 3600);
        assert!(out["local"].as_str().is_some_and(|s| s.len() == 19));
    }
}
