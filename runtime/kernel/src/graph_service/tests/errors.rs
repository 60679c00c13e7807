//! How the graph requests fail: a caller's mistake is invalid arguments, and a missing or
//! foreign graph file is unavailable and left untouched while memory runs without it.

use super::*;

#[test]
fn a_foreign_graph_file_is_left_alone_and_memory_runs_without_it() {
    let dir = std::env::temp_dir().join(format!("hearth-graph-svc-foreign-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("graph.db");
    std::fs::write(&path, b"not a database at all, just words").unwrap();
    let settings = GraphSettings {
        path: path.clone(),
        interval: TICK,
        model: None,
        scene_half_life: None,
    };
    let mut graph = GraphMemory::open(Some(&settings), LocalZone::default(), T0, None);
    assert_eq!(graph.idle_wait(T0), None, "no heartbeat without a graph");
    let err = graph
        .request(
            GraphRequest::Recall {
                query: "x".into(),
                k: 1,
                for_model: false,
            },
            "",
            T0,
        )
        .unwrap_err();
    assert!(
        matches!(err, crate::GraphMemoryError::Unavailable(_)),
        "{err}"
    );
    assert!(
        err.to_string().contains("graph memory unavailable"),
        "{err}"
    );
    assert_eq!(
        graph.request(GraphRequest::Stats, "", T0).unwrap()["available"],
        false
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"not a database at all, just words"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_callers_mistake_is_invalid_arguments_and_no_graph_is_unavailable() {
    use hearth_stages::HandlerError;
    let mut s = scratch("errors");
    for bad in [
        GraphRequest::Person {
            name: "Nobody".into(),
        },
        GraphRequest::Forget { id: "x9".into() },
        GraphRequest::Forget { id: "r999".into() },
        GraphRequest::SetTrait {
            name: "Ana".into(),
            trait_words: "生日".into(),
            value: "May".into(),
            sentence: String::new(),
        },
    ] {
        let e = s.graph.request(bad.clone(), "", T0).expect_err("refused");
        assert!(
            matches!(HandlerError::from(e), HandlerError::InvalidArguments(_)),
            "{bad:?}"
        );
    }
    let mut off = GraphMemory::open(None, LocalZone::default(), T0, None);
    let e = off
        .request(GraphRequest::Person { name: "Ana".into() }, "", T0)
        .expect_err("no graph");
    assert!(matches!(
        HandlerError::from(e),
        HandlerError::Unavailable(_)
    ));
}
