//! Every cold entry in id order, read a page at a time: what a measurement or a tool that
//! walks the whole of cold context reads (the passage list, the recall bench's explanations).

use std::collections::VecDeque;

use rusqlite::params;

use super::StoreReader;
use super::cold::{COLD_COLUMNS, ColdEntry, cold_from_row};
use super::error::{SqlContext, StoreError};

/// Entries read per query.
pub(super) const PAGE: usize = 256;

/// Every cold entry, ascending by id ([`StoreReader::cold_entries`]). Each page is one keyset
/// query (`id > last`), so no statement stays open between pages and memory stays bounded;
/// entries written during the walk may or may not be seen, none is seen twice. After an error
/// the iterator ends.
pub struct ColdEntries<'a> {
    reader: &'a StoreReader,
    after: i64,
    page: VecDeque<ColdEntry>,
    done: bool,
}

impl StoreReader {
    /// Every cold entry, ascending by id, read a page at a time.
    pub fn cold_entries(&self) -> ColdEntries<'_> {
        ColdEntries {
            reader: self,
            after: i64::MIN,
            page: VecDeque::new(),
            done: false,
        }
    }
}

impl ColdEntries<'_> {
    fn fill(&mut self) -> Result<(), StoreError> {
        const OP: &str = "cold_entries";
        let path = &self.reader.path;
        let mut stmt = self
            .reader
            .conn
            .prepare_cached(&format!(
                "SELECT {COLD_COLUMNS} FROM cold WHERE id > ?1 ORDER BY id LIMIT ?2"
            ))
            .ctx(OP, path)?;
        let mut rows = stmt.query(params![self.after, PAGE as i64]).ctx(OP, path)?;
        let mut n = 0;
        while let Some(row) = rows.next().ctx(OP, path)? {
            let entry = cold_from_row(OP, path, row)?;
            self.after = entry.id;
            self.page.push_back(entry);
            n += 1;
        }
        if n < PAGE {
            self.done = true;
        }
        Ok(())
    }
}

impl Iterator for ColdEntries<'_> {
    type Item = Result<ColdEntry, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.page.is_empty()
            && !self.done
            && let Err(e) = self.fill()
        {
            self.done = true;
            return Some(Err(e));
        }
        self.page.pop_front().map(Ok)
    }
}
