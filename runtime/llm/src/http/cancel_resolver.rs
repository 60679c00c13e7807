//! Name lookup that a cancel token can abandon: `getaddrinfo` cannot be interrupted, so a
//! host name is looked up on a helper thread while the caller waits for it or for the token.

use super::off_thread::{OffThread, run_cancellable};
use hearth_engine::CancelToken;
use std::net::IpAddr;
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

#[derive(Debug)]
pub(super) struct CancelResolver {
    cancel: CancelToken,
}

impl CancelResolver {
    pub(super) fn new(cancel: CancelToken) -> Self {
        Self { cancel }
    }
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
        let (uri, config) = (uri.clone(), config.clone());
        let job = move || DefaultResolver::default().resolve(&uri, &config, timeout);
        match run_cancellable(&self.cancel, "hearth-http-resolve", job)? {
            OffThread::Done(result) => result,
            OffThread::Cancelled => Err(super::error::cancelled_ureq()),
        }
    }
}
