//! The graph memory over a real cold context and a real graph file: the heartbeat, the tools'
//! requests, the indexer block, scenes, forgetting, and a graph file that cannot be used. This
//! module holds the scratch graph the tests share; each concept's tests are in a child module.

mod errors;
mod forget;
mod heartbeat;
mod indexer_block;
mod model_distill;
mod requests;
mod scenes;

use super::*;
use hearth_memory::{ContextEvent, Store};

const DAY: i64 = 86_400_000;
const T0: i64 = 1_780_000_000_000;
const TICK: Duration = Duration::from_secs(600);

struct Scratch {
    dir: PathBuf,
    cold: ColdContext,
    graph: GraphMemory,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn scratch(tag: &str) -> Scratch {
    scratch_in(tag, 0)
}

/// A scratch graph for a user `utc_offset_secs` east of UTC.
fn scratch_in(tag: &str, utc_offset_secs: i64) -> Scratch {
    scratch_zoned(tag, LocalZone::fixed(utc_offset_secs))
}

/// A scratch graph for a user in `zone`.
fn scratch_zoned(tag: &str, zone: LocalZone) -> Scratch {
    let dir = std::env::temp_dir().join(format!("hearth-graph-svc-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let cold = ColdContext::new(Store::open(dir.join("memory.db")).expect("store"), None);
    let settings = GraphSettings {
        path: dir.join("graph.db"),
        interval: TICK,
        model: None,
        scene_half_life: None,
    };
    let mut graph = GraphMemory::open(Some(&settings), zone, T0, None);
    let mut cold = cold;
    // The first idle step finds no notes an earlier run left: nothing is due after it.
    graph.unsay_idle(&mut cold, T0);
    Scratch { dir, cold, graph }
}

impl Scratch {
    /// Says `text` at `at` and archives it to cold context, as a prune would.
    fn say(&mut self, at: i64, text: &str) -> i64 {
        let event = ContextEvent::new(at, "cli", text).with_response("ok");
        self.cold
            .archive_events(vec![event], "prune", at)
            .expect("archived")[0]
    }

    /// Opens the graph file again at `at`, as the next run of the daemon does.
    fn restart(&mut self, at: i64) {
        let settings = GraphSettings {
            path: self.dir.join("graph.db"),
            interval: TICK,
            model: None,
            scene_half_life: None,
        };
        self.graph = GraphMemory::open(Some(&settings), LocalZone::fixed(0), at, None);
    }

    /// Runs the heartbeat at `at` (after its interval has passed).
    fn tick(&mut self, at: i64) {
        self.graph.tick_if_due(&self.cold, at);
    }

    fn ask(&mut self, req: GraphRequest, at: i64) -> Value {
        self.graph.request(req, "", at).expect("graph answers")
    }

    fn recall(&mut self, query: &str, at: i64) -> Vec<Value> {
        let found = self.ask(
            GraphRequest::Recall {
                query: query.into(),
                k: 10,
                for_model: true,
            },
            at,
        );
        found.as_array().expect("a list").clone()
    }

    /// Says `text` in turn `turn` from `source` at `at` and archives it, as a prune would: the
    /// event carries the turn's id, as the turn engine's do.
    fn say_in(&mut self, at: i64, turn: &str, source: &str, text: &str) {
        let mut event = ContextEvent::new(at, source, text).with_response("ok");
        event.id = turn.into();
        self.cold
            .archive_events(vec![event], "prune", at)
            .expect("archived");
    }

    /// One turn's scene entry and block, as the memory pass makes them.
    fn scene_block(&mut self, scene: &TurnScene, query: &str, at: i64) -> String {
        let entered = self.graph.enter_scene(scene, query, 0, at);
        self.graph.block_in(query, entered.as_ref(), 400, at).text
    }

    fn strength(&self, key: &str) -> u64 {
        let graph = self.graph.store.as_ref().expect("a graph");
        graph
            .scenes(usize::MAX)
            .expect("scenes")
            .into_iter()
            .find(|s| s.key == key)
            .unwrap_or_else(|| panic!("no scene {key}"))
            .strength
    }
}

fn find<'a>(hits: &'a [Value], object: &str) -> &'a Value {
    hits.iter()
        .find(|h| h["object"] == object)
        .unwrap_or_else(|| panic!("no {object} in {hits:#?}"))
}

/// A turn from `source` with request id `turn`.
fn turn(turn: &str, source: &str) -> TurnScene {
    TurnScene {
        turn_id: turn.into(),
        source: source.into(),
        ..TurnScene::default()
    }
}
