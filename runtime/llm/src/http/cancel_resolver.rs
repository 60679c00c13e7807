//! Name lookup that a cancel token can abandon: `getaddrinfo` cannot be interrupted, so a
//! host name is looked up on a helper thread while the caller waits for it or for the token of
//! the thread's current call. A name's addresses are remembered for as long as an idle
//! connection is kept, because `ureq` looks the name up before it looks in its pool: without
//! this, every call to a cloud API would pay a lookup and a thread even on a kept connection.

use super::call_scope;
use super::cancel_connector::no_call;
use super::off_thread::{OffThread, run_cancellable};
use parking_lot::Mutex;
use std::net::IpAddr;
use std::time::{Duration, Instant};
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// How many names are remembered at once (a few configured sources).
const REMEMBERED_NAMES: usize = 16;

/// Resolves for the calling thread's current call.
#[derive(Debug)]
pub(super) struct CancelResolver {
    recent: Mutex<Recent>,
}

impl CancelResolver {
    /// A resolver that uses looked-up addresses again for `remembered_for` (the client's idle
    /// connection age: a name is looked up again once its connections are gone).
    pub(super) fn remembering_for(remembered_for: Duration) -> Self {
        Self {
            recent: Mutex::new(Recent {
                entries: Vec::new(),
                remembered_for,
            }),
        }
    }
}

/// Recently looked-up names, bounded, oldest dropped first.
struct Recent {
    entries: Vec<(String, Instant, ResolvedSocketAddrs)>,
    /// How long looked-up addresses are used again.
    remembered_for: Duration,
}

impl std::fmt::Debug for Recent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recent")
            .field("names", &self.entries.len())
            .finish()
    }
}

impl Recent {
    /// The addresses of `key` looked up less than `remembered_for` before `now`.
    fn get(&mut self, key: &str, now: Instant) -> Option<ResolvedSocketAddrs> {
        let remembered_for = self.remembered_for;
        self.entries
            .retain(|(_, at, _)| now.saturating_duration_since(*at) < remembered_for);
        self.entries
            .iter()
            .find(|(k, _, _)| k == key)
            .map(|(_, _, addrs)| addrs.clone())
    }

    fn put(&mut self, key: String, now: Instant, addrs: ResolvedSocketAddrs) {
        self.entries.retain(|(k, _, _)| *k != key);
        if self.entries.len() >= REMEMBERED_NAMES {
            // Entries are pushed in time order, so the first is the oldest.
            self.entries.remove(0);
        }
        self.entries.push((key, now, addrs));
    }
}

/// What a lookup depends on: the scheme (its default port), host and port.
fn lookup_key(uri: &Uri) -> String {
    format!(
        "{}://{}:{}",
        uri.scheme_str().unwrap_or(""),
        uri.host().unwrap_or(""),
        uri.port_u16().map_or(String::new(), |p| p.to_string())
    )
}

impl Resolver for CancelResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let literal = uri
            .host()
            .map(|h| h.trim_start_matches('[').trim_end_matches(']'))
            .is_some_and(|h| h.parse::<IpAddr>().is_ok());
        if literal {
            // Nothing to wait for: the default resolver only parses the address.
            return DefaultResolver::default().resolve(uri, config, timeout);
        }
        let key = lookup_key(uri);
        if let Some(addrs) = self.recent.lock().get(&key, Instant::now()) {
            return Ok(addrs);
        }
        let call = call_scope::current().ok_or_else(no_call)?;
        let (uri, config) = (uri.clone(), config.clone());
        let job = move || DefaultResolver::default().resolve(&uri, &config, timeout);
        let addrs = match run_cancellable(&call.cancel, "hearth-http-resolve", job)? {
            OffThread::Done(result) => result?,
            OffThread::Cancelled => return Err(super::error::cancelled_ureq()),
        };
        if !addrs.is_empty() {
            self.recent.lock().put(key, Instant::now(), addrs.clone());
        }
        Ok(addrs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn addrs(port: u16) -> ResolvedSocketAddrs {
        let mut out = CancelResolver::remembering_for(Duration::ZERO).empty();
        out.push(SocketAddr::from(([127, 0, 0, 1], port)));
        out
    }

    #[test]
    fn names_are_remembered_for_a_while_and_a_few_at_a_time() {
        let t0 = Instant::now();
        let remembered_for = Duration::from_secs(15);
        let mut recent = Recent {
            entries: Vec::new(),
            remembered_for,
        };
        recent.put("a".into(), t0, addrs(1));
        assert_eq!(recent.get("a", t0 + remembered_for / 2), Some(addrs(1)));
        assert_eq!(recent.get("a", t0 + remembered_for), None, "expired");

        for n in 0..=REMEMBERED_NAMES {
            recent.put(format!("n{n}"), t0, addrs(u16::try_from(n).unwrap()));
        }
        assert_eq!(recent.entries.len(), REMEMBERED_NAMES);
        assert_eq!(recent.get("n0", t0), None, "the oldest went first");
        assert_eq!(recent.get("n1", t0), Some(addrs(1)));
    }

    #[test]
    fn a_lookup_depends_on_scheme_host_and_port_only() {
        let key = |u: &str| lookup_key(&u.parse::<Uri>().unwrap());
        assert_eq!(
            key("https://api.example/v1/a"),
            key("https://api.example/v1/b?q=1")
        );
        assert_ne!(key("https://api.example/"), key("http://api.example/"));
        assert_ne!(key("http://api.example:8080/"), key("http://api.example/"));
        assert_ne!(key("http://a.example/"), key("http://b.example/"));
    }
}
