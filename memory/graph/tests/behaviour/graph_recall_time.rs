//! A query's time words are read in the user's zone, as cold recall reads a question: the
//! user's "yesterday", not UTC's, and "today" names no past span to look in.

use hearth_engine::LocalZone;
use hearth_graph::{ColdItem, FactStatus, RecallLimits};

use crate::support::{T0, graph};

const HOUR: i64 = 3_600_000;
/// Honolulu, ten hours west of UTC: its evening is already tomorrow in UTC.
const HONOLULU: i64 = -10 * 3_600;

#[test]
fn yesterday_is_the_users_yesterday() {
    let mut g = graph();
    g.graph.set_zone(LocalZone::fixed(HONOLULU));
    // Tuesday 19:00 in Honolulu, Wednesday 05:00 UTC.
    let told = ColdItem {
        id: 1,
        turn_id: "turn-1".into(),
        said_ms: T0 + 20 * HOUR,
        text: "I moved to Lisbon on Monday.".into(),
        utc_offset_secs: HONOLULU,
    };
    g.graph.distill_items(&[told]).unwrap();
    // Only what the query's words and time name: no word of the query is in the statement,
    // so the time list alone can find the move.
    let narrow = RecallLimits {
        expand_speaker: false,
        ..RecallLimits::default()
    };
    // Tuesday 20:00 in Honolulu: UTC's yesterday is that Tuesday, the user's is Monday.
    let asked = T0 + 21 * HOUR;
    let moves = |graph: &hearth_graph::GraphStore, query: &str| -> usize {
        let hits = graph.recall_with(query, asked, 8, narrow).unwrap();
        hits.iter()
            .filter(|h| h.status == FactStatus::Event && h.object == "moved to Lisbon")
            .count()
    };

    assert_eq!(moves(&g.graph, "what happened yesterday"), 1);
    assert_eq!(
        moves(&g.graph, "what happened today"),
        0,
        "today names no past span"
    );
    g.graph.set_zone(LocalZone::fixed(0));
    assert_eq!(
        moves(&g.graph, "what happened yesterday"),
        0,
        "read in UTC, yesterday is another day"
    );
}
