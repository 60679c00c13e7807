//! Behaviour of the graph on real SQLite files in temporary directories.

mod support;

mod graph_conversation;
mod graph_crash;
mod graph_extractor_quality;
mod graph_forget;
mod graph_invariants;
mod graph_model_distill;
mod graph_names_and_purge;
mod graph_people;
mod graph_recall_bounds;
mod graph_recall_dense;
mod graph_recall_time;
mod graph_scenes;
mod graph_unsaid;
mod graph_upkeep;
