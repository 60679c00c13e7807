//! The plugin host wired to the kernel: plugin tools, stages and channels go into the kernel's
//! tables; lifecycle events onto the event ring; injected inputs into the ingress; the kernel's
//! event ring lives in the one shared segment every plugin maps.

use std::sync::Arc;

use hearth_ipc::{EventKind, SegmentConfig};
use hearth_kernel::events::EventBus;
use hearth_kernel::ingress::KernelHandle;
use hearth_kernel::input::{InputEvent, Trust};
use hearth_plugin_host::{DataPlane, KernelPort, PluginError};
use hearth_rpc::Priority;
use serde_json::{Value, json};

/// The shared segment, created once at start, and the kernel's event bus publishing into its
/// ring: every event the kernel publishes is readable by plugins without a call.
pub(super) fn shared_events() -> Result<(Arc<DataPlane>, EventBus), PluginError> {
    let plane = DataPlane::create(SegmentConfig::default())?;
    let publisher = plane
        .take_publisher()
        .expect("a fresh segment still holds its publisher");
    let bus = EventBus::new(publisher, plane.subscriber(), "hearth");
    Ok((plane, bus))
}

pub(super) struct KernelPlugins {
    pub(super) handle: KernelHandle,
    pub(super) events: EventBus,
}

impl KernelPort for KernelPlugins {
    fn publish(&self, kind: &str, payload: &Value) {
        let mut event = payload.clone();
        event["type"] = json!(kind);
        self.events.publish(EventKind::System, &event);
    }

    fn inject(
        &self,
        plugin: &str,
        channel: &str,
        text: &str,
        interrupt: bool,
        priority: Option<Priority>,
    ) -> Result<(), String> {
        let input = InputEvent::text(channel, text)
            .with_trust(Trust::External)
            .with_payload("plugin", json!(plugin));
        // Nobody waits for the reply of an injected input; it goes to the channel's output.
        if interrupt {
            let level = priority.unwrap_or(Priority::L1);
            let input = input
                .with_payload("priority", json!(level))
                .with_payload("interrupt", json!(true));
            drop(self.handle.interrupt(input));
        } else {
            drop(self.handle.submit(input));
        }
        Ok(())
    }
}
