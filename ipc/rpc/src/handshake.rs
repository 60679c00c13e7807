//! The first exchange: which protocol version both sides speak, and who the plugin is.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::connection::Peer;
use crate::error::RpcError;
use crate::error_code::{ErrorKind, HandlerError};
use crate::methods;

/// The protocol version this build speaks best.
pub const PROTOCOL_VERSION: u32 = 1;

/// Every version this build accepts, newest first. When version 2 exists the kernel keeps
/// accepting 1 here (DESIGN §4.8: "the kernel accepts the previous version too").
pub const SUPPORTED_VERSIONS: &[u32] = &[PROTOCOL_VERSION];

/// How long the kernel waits for the handshake answer before it stops the process.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the kernel waits for the answer to `plugin.stop` (then SIGTERM, then SIGKILL).
pub const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// `handshake` params, kernel → plugin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandshakeParams {
    /// The versions the kernel accepts, newest first.
    pub protocol_versions: Vec<u32>,
    /// The kernel's own version, for the plugin's logs.
    pub kernel_version: String,
    /// The name the kernel loaded the plugin under (from its manifest).
    pub plugin_name: String,
    /// The data plane on offer (shared segment on fd 3, notifications on fd 4), as laid out in
    /// `ipc/DESIGN.md`; absent when the kernel offers none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_plane: Option<Value>,
}

/// `handshake` result, plugin → kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandshakeResult {
    /// The version chosen, one of the offered.
    pub protocol: u32,
    /// The plugin SDK's version (`"python-stdlib"` for hand-written plugins, or any string).
    pub sdk_version: String,
    /// The plugin's own name; must equal the name it was loaded under.
    pub plugin_name: String,
    /// The plugin's process id.
    pub pid: u32,
    /// The plugin attached the offered data plane: the kernel may then use its stage-context
    /// area for `stage.invoke` (PROTOCOL §9.4). Absent (false) keeps every call inline.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub data_plane: bool,
}

/// The newest version in both lists.
pub fn choose_version(offered: &[u32], supported: &[u32]) -> Option<u32> {
    offered
        .iter()
        .filter(|v| supported.contains(v))
        .max()
        .copied()
}

/// The plugin side: answers the kernel's offer, or the `VersionMismatch` error to reply with
/// (after which the plugin exits).
pub fn accept(
    params: &HandshakeParams,
    plugin_name: &str,
    sdk_version: &str,
) -> Result<HandshakeResult, HandlerError> {
    let Some(protocol) = choose_version(&params.protocol_versions, SUPPORTED_VERSIONS) else {
        return Err(HandlerError::new(
            ErrorKind::VersionMismatch,
            format!(
                "the kernel offers protocol versions {:?}, plugin {plugin_name} speaks {:?}: \
                 update the plugin's SDK or the kernel",
                params.protocol_versions, SUPPORTED_VERSIONS
            ),
        )
        .with_data(json!({"offered": params.protocol_versions, "supported": SUPPORTED_VERSIONS})));
    };
    Ok(HandshakeResult {
        protocol,
        sdk_version: sdk_version.to_owned(),
        plugin_name: plugin_name.to_owned(),
        pid: std::process::id(),
        data_plane: false,
    })
}

/// The kernel side: sends the offer and checks the answer. Any error means the process must be
/// stopped; the error says why in words a user can act on.
pub fn handshake(
    peer: &Peer,
    params: &HandshakeParams,
    timeout: Duration,
) -> Result<HandshakeResult, RpcError> {
    let failed = |reason: String| RpcError::Handshake {
        plugin: params.plugin_name.clone(),
        reason,
    };
    let result: HandshakeResult = match peer.call_typed(methods::HANDSHAKE, params, timeout) {
        Ok(result) => result,
        Err(RpcError::Remote { error, .. }) => return Err(failed(error.message)),
        Err(RpcError::TimedOut { after, .. }) => {
            return Err(failed(format!("no handshake answer within {after:?}")));
        }
        Err(RpcError::Codec { source, .. }) => {
            return Err(failed(format!("malformed handshake answer: {source}")));
        }
        Err(e) => return Err(failed(e.to_string())),
    };
    if !params.protocol_versions.contains(&result.protocol) {
        return Err(failed(format!(
            "the plugin chose protocol version {}, the kernel offered {:?}",
            result.protocol, params.protocol_versions
        )));
    }
    if result.plugin_name != params.plugin_name {
        return Err(failed(format!(
            "the process calls itself {:?}, its manifest says {:?}",
            result.plugin_name, params.plugin_name
        )));
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(versions: &[u32]) -> HandshakeParams {
        HandshakeParams {
            protocol_versions: versions.to_vec(),
            kernel_version: "0.1.0".into(),
            plugin_name: "p".into(),
            data_plane: None,
        }
    }

    #[test]
    fn newest_common_version_wins() {
        assert_eq!(choose_version(&[3, 2, 1], &[1, 2]), Some(2));
        assert_eq!(choose_version(&[1, 2], &[2, 1]), Some(2));
        assert_eq!(choose_version(&[5], &[1]), None);
        assert_eq!(choose_version(&[], &[1]), None);
    }

    #[test]
    fn plugin_refuses_an_offer_without_its_version() {
        let ok = accept(&offer(&[PROTOCOL_VERSION]), "p", "1.0").expect("accepts");
        assert_eq!(ok.protocol, PROTOCOL_VERSION);
        assert_eq!(ok.pid, std::process::id());
        let e = accept(&offer(&[99]), "p", "1.0").expect_err("no common version");
        assert_eq!(e.kind, ErrorKind::VersionMismatch);
        assert!(e.message.contains("[99]"), "{}", e.message);
    }
}
