use super::*;
use crate::adapter::bundled as b;

#[test]
fn every_bundled_adapter_loads_with_its_name() {
    watchdog(30, || {
        let names: Vec<&str> = b::names().collect();
        assert_eq!(names, ["openai", "anthropic", "gemini", "ollama"]);
        for name in names {
            let a = bundled(name);
            assert_eq!(a.name(), name);
            assert!(!a.version().is_empty(), "{name} has a version");
            assert!(
                a.has_response_transform() && a.has_stream_transform(),
                "{name} transforms answers"
            );
        }
    });
}

#[test]
fn source_lookup_by_name_or_file() {
    assert_eq!(b::source("openai"), b::source("openai.lua"));
    assert!(b::source("openai").is_some_and(|s| s.contains("transform_stream_chunk")));
    assert_eq!(b::source("nope"), None);
}

#[test]
fn install_writes_only_missing_files() {
    let dir = hearth_testkit::fresh_dir("adapters-install");
    let written = b::install(&dir).expect("installs");
    assert_eq!(written.len(), b::ADAPTERS.len());
    for (file, src) in b::ADAPTERS {
        assert_eq!(
            std::fs::read_to_string(dir.join(file)).expect("written"),
            *src
        );
    }
    assert!(
        b::install(&dir).expect("installs").is_empty(),
        "nothing is rewritten"
    );

    let edited = dir.join("openai.lua");
    std::fs::write(&edited, "-- my edit\n").expect("edit");
    std::fs::remove_file(dir.join("gemini.lua")).expect("remove");
    let written = b::install(&dir).expect("installs");
    assert_eq!(
        written,
        [dir.join("gemini.lua")],
        "only the missing file comes back"
    );
    assert_eq!(
        std::fs::read_to_string(&edited).expect("read"),
        "-- my edit\n",
        "a user's edit survives"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .expect("list")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary files are left behind");
    let _ = std::fs::remove_dir_all(&dir);
}
