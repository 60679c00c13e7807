//! Every cold entry in id order, read a page at a time: what a measurement or a tool that
//! walks the whole of cold context reads (the passage list, the recall bench's explanations).

use rusqlite::params;

use super::StoreReader;
use super::cold::{COLD_COLUMNS, ColdEntry, cold_from_row};
use super::error::{SqlContext, StoreError};
use super::keyset::Keyset;

/// Entries read per query.
pub(super) const PAGE: usize = 256;

/// Every cold entry, ascending by id ([`StoreReader::cold_entries`]): a keyset walk (see
/// `keyset`), one query per page.
pub struct ColdEntries<'a> {
    reader: &'a StoreReader,
    walk: Keyset<ColdEntry>,
}

impl StoreReader {
    /// Every cold entry, ascending by id, read a page at a time.
    pub fn cold_entries(&self) -> ColdEntries<'_> {
        ColdEntries {
            reader: self,
            walk: Keyset::new(),
        }
    }
}

/// The cold entries with ids above `after`, one page.
fn entry_page(reader: &StoreReader, after: i64) -> Result<Vec<(i64, ColdEntry)>, StoreError> {
    const OP: &str = "cold_entries";
    let path = &reader.path;
    let mut stmt = reader
        .conn
        .prepare_cached(&format!(
            "SELECT {COLD_COLUMNS} FROM cold WHERE id > ?1 ORDER BY id LIMIT ?2"
        ))
        .ctx(OP, path)?;
    let mut rows = stmt.query(params![after, PAGE as i64]).ctx(OP, path)?;
    let mut page = Vec::new();
    while let Some(row) = rows.next().ctx(OP, path)? {
        let entry = cold_from_row(OP, path, row)?;
        page.push((entry.id, entry));
    }
    Ok(page)
}

impl Iterator for ColdEntries<'_> {
    type Item = Result<ColdEntry, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        let reader = self.reader;
        self.walk.next_with(PAGE, |after| entry_page(reader, after))
    }
}
