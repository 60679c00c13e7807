//! A walk over a table in id order, a page at a time. Each page is one keyset query (`id >
//! last`), so no statement stays open between pages and memory stays bounded; rows written
//! during the walk may or may not be seen, none is seen twice. After an error the walk ends.
//! Shared by the walks over cold entries and over cold vectors.

use std::collections::VecDeque;

use super::error::StoreError;

/// Where a keyset walk stands: the last id read, the rest of the current page, whether the
/// last page was short.
pub(super) struct Keyset<T> {
    after: i64,
    page: VecDeque<T>,
    done: bool,
}

impl<T> Keyset<T> {
    /// A walk from the first row.
    pub(super) fn new() -> Self {
        Self {
            after: i64::MIN,
            page: VecDeque::new(),
            done: false,
        }
    }

    /// The next row. When the page is used up, `fetch(after)` reads the next one: at most
    /// `size` rows with ids above `after`, ascending, each with its id; a shorter page is the
    /// last.
    pub(super) fn next_with(
        &mut self,
        size: usize,
        fetch: impl FnOnce(i64) -> Result<Vec<(i64, T)>, StoreError>,
    ) -> Option<Result<T, StoreError>> {
        if self.page.is_empty() && !self.done {
            match fetch(self.after) {
                Ok(rows) => {
                    self.done = rows.len() < size;
                    for (id, row) in rows {
                        self.after = id;
                        self.page.push_back(row);
                    }
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        self.page.pop_front().map(Ok)
    }
}

#[cfg(test)]
mod tests {
    use super::Keyset;
    use crate::store::StoreError;

    /// Rows 1..=n, read `size` at a time by a fetch that counts its calls.
    fn walk(n: i64, size: usize) -> (Vec<i64>, usize) {
        let mut walk = Keyset::new();
        let mut calls = 0;
        let mut out = Vec::new();
        while let Some(row) = walk.next_with(size, |after| {
            calls += 1;
            Ok::<_, StoreError>(
                (after.max(0) + 1..=n)
                    .take(size)
                    .map(|id| (id, id))
                    .collect(),
            )
        }) {
            out.push(row.expect("no error"));
        }
        (out, calls)
    }

    #[test]
    fn every_row_once_in_order_one_fetch_per_page() {
        assert_eq!(walk(7, 3), ((1..=7).collect(), 3));
        // A full last page needs one more (empty) fetch to know it was the last.
        assert_eq!(walk(6, 3), ((1..=6).collect(), 3));
        assert_eq!(walk(0, 3), (vec![], 1));
    }

    #[test]
    fn an_error_ends_the_walk() {
        let mut walk: Keyset<i64> = Keyset::new();
        let err = walk.next_with(3, |_| {
            Err(StoreError::data(
                "test",
                std::path::Path::new("x"),
                "bad".to_owned(),
            ))
        });
        assert!(matches!(err, Some(Err(_))));
        assert!(walk.next_with(3, |_| Ok(vec![(1, 1)])).is_none());
    }
}
