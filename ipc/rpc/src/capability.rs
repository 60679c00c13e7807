//! Capability names, the method → capability table and the gate the host applies to every
//! reverse call of an external plugin (SPEC §6.3 "Capability gating").

use serde_json::{Value, json};

use crate::call_context::{Priority, Trust};
use crate::error::RpcError;
use crate::error_code::{ErrorKind, HandlerError};
use crate::methods;

/// Always granted: handshake, registrations, own settings, locks, the arena, log.
pub const CORE: &str = "core";
/// Injecting inputs and interrupts.
pub const IO: &str = "io";
/// The knowledge graph.
pub const MEMORY: &str = "memory";
/// The document store.
pub const DOC_MEMORY: &str = "doc_memory";
/// The knowledge base.
pub const KNOWLEDGE: &str = "knowledge";
/// The text memory log.
pub const TEXT_MEMORY: &str = "text_memory";
/// LLM sources.
pub const LLM: &str = "llm";
/// The social graph (read-only).
pub const SOCIAL: &str = "social";
/// Subscribing to kernel events.
pub const EVENTS: &str = "events";
/// Managing other plugins.
pub const PLUGIN_MGR: &str = "plugin_mgr";
/// Core settings and other plugins' settings.
pub const SETTINGS_CROSS: &str = "settings_cross";

/// Every capability a manifest may list (`core` is implied by any list).
pub const CAPABILITIES: [&str; 10] = [
    IO,
    MEMORY,
    DOC_MEMORY,
    KNOWLEDGE,
    TEXT_MEMORY,
    LLM,
    SOCIAL,
    EVENTS,
    PLUGIN_MGR,
    SETTINGS_CROSS,
];

/// Every plugin → kernel method and the capability it needs (the original's 59 plus `log` and
/// `output.unregister`, both core, `llm.complete`, and the web channel's `io.submit`,
/// `io.reply`, `io.stop`, `io.history`, `kernel.control`, `memory.search` and `memory.forget`).
pub const METHOD_CAPABILITIES: &[(&str, &str)] = &[
    (methods::HANDSHAKE, CORE),
    (methods::TOOL_REGISTER, CORE),
    (methods::STAGE_REGISTER, CORE),
    (methods::OUTPUT_REGISTER, CORE),
    (methods::OUTPUT_UNREGISTER, CORE),
    ("api.register", CORE),
    (methods::INPUT_REGISTER, CORE),
    ("stage.lock", CORE),
    ("stage.unlock", CORE),
    ("arena.alloc", CORE),
    ("arena.free", CORE),
    (methods::SETTINGS_GET, CORE),
    (methods::SETTINGS_SET, CORE),
    ("settings.list", CORE),
    ("settings.defs", CORE),
    ("settings.registerDef", CORE),
    (methods::SETTINGS_DATA_DIR, CORE),
    (methods::LIFECYCLE_AUTO_RESTART, CORE),
    (methods::IO_SET_TOOL_BLOCKS, CORE),
    (methods::LOG, CORE),
    (methods::IO_INJECT_TEXT, IO),
    (methods::IO_INJECT_INTERRUPT, IO),
    (methods::IO_INJECT_TEXT_NO_MEM, IO),
    (methods::IO_INJECT_INPUT_SYNC, IO),
    (methods::IO_INJECT_MEDIA, IO),
    (methods::IO_INJECT_MEDIA_SYNC, IO),
    (methods::IO_INJECT_INTERRUPT_MEDIA, IO),
    (methods::IO_SUBMIT, IO),
    (methods::IO_REPLY, IO),
    (methods::IO_STOP, IO),
    (methods::IO_HISTORY, IO),
    (methods::MEMORY_RECALL, MEMORY),
    ("memory.commit", MEMORY),
    (methods::MEMORY_INTROSPECT, MEMORY),
    (methods::MEMORY_MERGE, MEMORY),
    (methods::MEMORY_PURGE, MEMORY),
    (methods::MEMORY_SEARCH, MEMORY),
    (methods::MEMORY_FORGET, MEMORY),
    (methods::DOC_QUERY, DOC_MEMORY),
    (methods::DOC_INSERT, DOC_MEMORY),
    (methods::DOC_REMOVE, DOC_MEMORY),
    (methods::DOC_STATS, DOC_MEMORY),
    (methods::DOC_INSERT_WITH_MEDIA, DOC_MEMORY),
    (methods::KNOWLEDGE_SEARCH, KNOWLEDGE),
    (methods::KNOWLEDGE_ADD, KNOWLEDGE),
    (methods::KNOWLEDGE_LIST, KNOWLEDGE),
    (methods::TEXTMEMORY_APPEND, TEXT_MEMORY),
    ("settings.getCore", SETTINGS_CROSS),
    ("settings.setCore", SETTINGS_CROSS),
    ("settings.listCore", SETTINGS_CROSS),
    ("settings.getPlugin", SETTINGS_CROSS),
    ("settings.setPlugin", SETTINGS_CROSS),
    ("settings.listPlugin", SETTINGS_CROSS),
    ("settings.dump", SETTINGS_CROSS),
    ("settings.plugins", SETTINGS_CROSS),
    (methods::LLM_LIST_SOURCES, LLM),
    (methods::LLM_SET_SOURCE, LLM),
    (methods::LLM_CURRENT_SOURCE, LLM),
    (methods::LLM_COMPLETE, LLM),
    (methods::SOCIAL_GET_PERSON, SOCIAL),
    (methods::SOCIAL_GET_NETWORK, SOCIAL),
    (methods::SOCIAL_GET_TRAIT, SOCIAL),
    (methods::SOCIAL_GET_RELATIONS, SOCIAL),
    (methods::SOCIAL_LIST_PERSONS, SOCIAL),
    (methods::EVENTS_SUBSCRIBE, EVENTS),
    (methods::EVENTS_UNSUBSCRIBE, EVENTS),
    (methods::PLUGIN_RELOAD_ONE, PLUGIN_MGR),
    (methods::PLUGIN_LIST_LOADED, PLUGIN_MGR),
    (methods::PLUGIN_IS_DISABLED, PLUGIN_MGR),
    (methods::KERNEL_CONTROL, PLUGIN_MGR),
];

/// Methods an external plugin is never offered, whatever its manifest says.
pub const NEVER_OFFERED: &[(&str, &str)] = &[(
    methods::EVENTS_PUBLISH,
    "external plugins subscribe to events (events.subscribe) but never publish them",
)];

/// The capability `method` needs, or `None` for a method not in the table.
pub fn capability_of(method: &str) -> Option<&'static str> {
    METHOD_CAPABILITIES
        .iter()
        .find(|(m, _)| *m == method)
        .map(|(_, c)| *c)
}

/// What a plugin's manifest grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grants {
    /// `None`: the manifest lists no capabilities, which grants all (the original's backward
    /// compatible rule).
    listed: Option<Vec<&'static str>>,
}

impl Grants {
    /// Everything (a manifest without a `capabilities` list).
    pub fn unrestricted() -> Grants {
        Grants { listed: None }
    }

    /// From the manifest's `capabilities`; an empty list is unrestricted, a non-empty one grants
    /// `core` plus the listed groups, an unknown name is an error (a typo must not silently
    /// deny or grant).
    pub fn from_manifest<S: AsRef<str>>(names: &[S]) -> Result<Grants, RpcError> {
        if names.is_empty() {
            return Ok(Grants::unrestricted());
        }
        let mut listed = vec![CORE];
        for name in names {
            let name = name.as_ref();
            match CAPABILITIES.iter().chain([&CORE]).find(|c| **c == name) {
                Some(cap) => listed.push(cap),
                None => {
                    return Err(RpcError::UnknownCapability {
                        name: name.to_owned(),
                        known: CAPABILITIES.join(", "),
                    });
                }
            }
        }
        Ok(Grants {
            listed: Some(listed),
        })
    }

    /// Whether `capability` is granted.
    pub fn allows(&self, capability: &str) -> bool {
        self.listed
            .as_ref()
            .is_none_or(|listed| listed.contains(&capability))
    }
}

/// Whether an external plugin holding `grants` may call `method`.
///
/// The refusal is the error to answer with: `Denied` naming the method, the missing capability
/// and every known capability (`data: {method, capability, known}`), `Denied` for a method never
/// offered, `MethodNotFound` for a method not in the table.
pub fn gate(method: &str, grants: &Grants) -> Result<(), HandlerError> {
    if let Some((_, why)) = NEVER_OFFERED.iter().find(|(m, _)| *m == method) {
        return Err(HandlerError::new(
            ErrorKind::Denied,
            format!("{method} is never offered to external plugins: {why}"),
        )
        .with_data(json!({"method": method, "capability": Value::Null})));
    }
    let Some(capability) = capability_of(method) else {
        return Err(HandlerError::method_not_found(method));
    };
    if grants.allows(capability) {
        return Ok(());
    }
    Err(HandlerError::new(
        ErrorKind::Denied,
        format!(
            "{method} needs capability \"{capability}\", which the plugin's manifest does not \
             grant (known capabilities: {})",
            CAPABILITIES.join(", ")
        ),
    )
    .with_data(json!({"method": method, "capability": capability, "known": CAPABILITIES})))
}

/// The level an input of `trust` may claim: external plugins get at most L3.
pub fn clamp_priority(trust: Trust, priority: Priority) -> Priority {
    match (trust, priority) {
        (Trust::External, Priority::L4) => Priority::L3,
        (_, p) => p,
    }
}

/// Applies [`clamp_priority`] to an inject call's `options.priority` (or top-level `priority`)
/// in place; other methods and params without a priority are left alone. Returns whether it
/// clamped.
pub fn clamp_inject_params(method: &str, params: &mut Value, trust: Trust) -> bool {
    if !(method.starts_with("io.inject") || method == methods::IO_SUBMIT) {
        return false;
    }
    let mut clamped = clamp_slot(params.get_mut("priority"), trust);
    if let Some(options) = params.get_mut("options") {
        clamped |= clamp_slot(options.get_mut("priority"), trust);
    }
    clamped
}

fn clamp_slot(slot: Option<&mut Value>, trust: Trust) -> bool {
    let Some(slot) = slot else { return false };
    let Ok(level) = serde_json::from_value::<Priority>(slot.clone()) else {
        return false;
    };
    let allowed = clamp_priority(trust, level);
    *slot = serde_json::to_value(allowed).expect("a priority serialises");
    allowed != level
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_every_original_method_once() {
        let mut seen = std::collections::HashSet::new();
        for (m, c) in METHOD_CAPABILITIES {
            assert!(seen.insert(*m), "{m} listed twice");
            assert!(
                *c == CORE || CAPABILITIES.contains(c),
                "{m}: unknown capability {c}"
            );
        }
        // 59 original methods plus handshake, log, output.unregister, llm.complete and the
        // web channel's seven.
        assert_eq!(METHOD_CAPABILITIES.len(), 70);
    }

    #[test]
    fn listed_capabilities_grant_core_plus_the_list() {
        let g = Grants::from_manifest(&["memory"]).expect("known");
        assert!(gate("memory.recall", &g).is_ok());
        assert!(gate("tool.register", &g).is_ok());
        let e = gate("io.injectText", &g).expect_err("io not granted");
        assert_eq!(e.kind, ErrorKind::Denied);
        assert!(e.message.contains("io.injectText") && e.message.contains("\"io\""));
        let data = e.data.expect("detail");
        assert_eq!(data["method"], "io.injectText");
        assert_eq!(data["capability"], "io");
        assert_eq!(data["known"].as_array().map(Vec::len), Some(10));
    }

    #[test]
    fn no_list_is_unrestricted_but_publish_is_never_offered() {
        for g in [
            Grants::unrestricted(),
            Grants::from_manifest::<&str>(&[]).expect("empty"),
        ] {
            for (m, _) in METHOD_CAPABILITIES {
                assert!(gate(m, &g).is_ok(), "{m}");
            }
            assert_eq!(
                gate("events.publish", &g).map_err(|e| e.kind),
                Err(ErrorKind::Denied)
            );
            assert_eq!(
                gate("selftest.run", &g).map_err(|e| e.kind),
                Err(ErrorKind::MethodNotFound)
            );
        }
    }

    #[test]
    fn unknown_capability_in_a_manifest_is_an_error() {
        let e = Grants::from_manifest(&["memory", "memroy"]).expect_err("typo");
        assert!(e.to_string().contains("memroy"), "{e}");
    }

    #[test]
    fn l4_is_clamped_for_external_callers_only() {
        assert_eq!(clamp_priority(Trust::External, Priority::L4), Priority::L3);
        assert_eq!(clamp_priority(Trust::Builtin, Priority::L4), Priority::L4);
        assert_eq!(clamp_priority(Trust::External, Priority::L2), Priority::L2);
        let mut p = json!({"text": "x", "options": {"priority": "L4"}, "priority": "L4"});
        assert!(clamp_inject_params(
            "io.injectInterrupt",
            &mut p,
            Trust::External
        ));
        assert_eq!(p["options"]["priority"], "L3");
        assert_eq!(p["priority"], "L3");
        let mut q = json!({"priority": "L4"});
        assert!(!clamp_inject_params(
            "io.injectInterrupt",
            &mut q,
            Trust::Builtin
        ));
        assert!(!clamp_inject_params(
            "settings.set",
            &mut q,
            Trust::External
        ));
        assert_eq!(q["priority"], "L4");
    }
}
