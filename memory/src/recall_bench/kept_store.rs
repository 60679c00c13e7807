//! A store kept between runs (`--store-dir`): what of a corpus it already holds, so a run
//! re-ranks without re-embedding, and an ingest that was stopped (an hour into a long set's
//! two models) resumes where it stopped instead of starting again.

use std::collections::HashSet;
use std::path::Path;

use super::RecallBenchError;
use crate::recall::{ColdContext, EMBED_BATCH};
use crate::{ContextEvent, MemoryModels, Store};

/// Opens the store kept at `path` for a corpus of `events`, with how many of them it already
/// holds ([`held_prefix`]); a store holding anything else is removed (with its WAL and shared
/// memory files) and opened empty.
pub(super) fn open(
    path: &Path,
    events: &[ContextEvent],
) -> Result<(Store, usize), RecallBenchError> {
    let store = Store::open(path)?;
    if let Some(held) = held_prefix(&store, events)? {
        return Ok((store, held));
    }
    drop(store);
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        let _ = std::fs::remove_file(file);
    }
    Ok((Store::open(path)?, 0))
}

/// How many of `events` a kept store already holds: `Some(n)` when its cold entries are
/// exactly the first `n` of them (an ingest commits whole batches in order, so one that was
/// stopped leaves such a prefix), `None` when it holds anything else — another corpus, another
/// version of the set — and must start afresh.
fn held_prefix(store: &Store, events: &[ContextEvent]) -> Result<Option<usize>, RecallBenchError> {
    let count = store.cold_count()? as usize;
    if count > events.len() {
        return Ok(None);
    }
    let mut expected: HashSet<&str> = events[..count].iter().map(|e| e.id.as_str()).collect();
    for entry in store.cold_entries() {
        // A foreign id, or one seen twice, means the store is not this prefix.
        if !expected.remove(entry?.event.id.as_str()) {
            return Ok(None);
        }
    }
    Ok(expected.is_empty().then_some(count))
}

/// Whether a kept store holds `items` entries, each with a vector of every model in `models`:
/// one a question can be explained from as the run that kept it ranked.
pub(super) fn holds_corpus(
    store: &Store,
    items: usize,
    models: &MemoryModels,
) -> Result<bool, RecallBenchError> {
    Ok(store.cold_count()? == items as u64 && vectors_complete(store, models)?)
}

/// Whether every held entry has a vector of every model in `models` (a store ingested with
/// other models, or stopped between an entry's main vector and its companion's, lacks some).
pub(super) fn vectors_complete(
    store: &Store,
    models: &MemoryModels,
) -> Result<bool, RecallBenchError> {
    if let Some(dense) = &models.dense
        && !store
            .cold_stale_vectors(&dense.fingerprint().to_string())?
            .is_empty()
    {
        return Ok(false);
    }
    if let Some(companion) = &models.companion {
        let fp = companion.fingerprint().to_string();
        return Ok(store.cold_side_missing_after(&fp, i64::MIN, 1)?.is_empty());
    }
    Ok(true)
}

/// Gives every held entry the vectors it lacks, as the daemon's idle back-fill does, a batch
/// at a time: returns how many vectors were written. Stops early only if a model fails (then
/// those entries rank by the other lists, as in the daemon).
pub(super) fn fill_vectors(cold: &mut ColdContext) -> Result<usize, RecallBenchError> {
    let mut written = 0;
    loop {
        match cold.backfill(EMBED_BATCH)? {
            0 => return Ok(written),
            n => written += n,
        }
    }
}
