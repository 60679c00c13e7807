//! Behaviour of the media store on real SQLite files and blobs in temporary directories.

mod support;

mod media_bad_input;
mod media_corruption;
mod media_crash;
mod media_dedup;
mod media_delete;
mod media_foreign;
mod media_roundtrip;
mod media_vectors;
mod proptest_roundtrip;
