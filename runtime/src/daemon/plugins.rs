//! The plugin host wired to the kernel: plugin tools, stages and channels go into the kernel's
//! tables; lifecycle events onto the event ring; injected inputs into the ingress.

use hearth_ipc::EventKind;
use hearth_kernel::events::EventBus;
use hearth_kernel::ingress::KernelHandle;
use hearth_kernel::input::{InputEvent, Trust};
use hearth_plugin_host::KernelPort;
use hearth_rpc::Priority;
use serde_json::{Value, json};

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
