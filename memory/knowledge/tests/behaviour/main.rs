//! Behaviour of the knowledge base on real directories and real SQLite files in temporary
//! directories.

mod support;

mod bench;
mod corrupt_index;
mod create_and_search;
mod delete;
mod disk_edits;
mod fusion;
mod name_properties;
mod names;
mod reopen_and_embedder;
mod skipped_files;
