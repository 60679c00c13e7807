//! Method names on the wire (SPEC §6.3 keeps the original's names; `PROTOCOL.md` lists them all).

/// Kernel → plugin: the first request; negotiates the protocol version.
pub const HANDSHAKE: &str = "handshake";
/// Kernel → plugin: construct with `{name, config}`, do not start.
pub const PLUGIN_INIT: &str = "plugin.init";
/// Kernel → plugin: register tools, stages and channels (by reverse calls), then answer.
pub const PLUGIN_START: &str = "plugin.start";
/// Kernel → plugin: run the stop handlers (LIFO), answer, exit.
pub const PLUGIN_STOP: &str = "plugin.stop";
/// Kernel → plugin: run a registered tool.
pub const TOOL_INVOKE: &str = "tool.invoke";
/// Kernel → plugin: run a registered stage handler on a stage context.
pub const STAGE_INVOKE: &str = "stage.invoke";
/// Kernel → plugin: send content out through a registered output channel.
pub const OUTPUT_INVOKE: &str = "output.invoke";

/// Either way, a notification: stop serving request `{id}` of the sender's.
pub const CANCEL: &str = "$/cancel";

/// Plugin → kernel: register a tool `{name, def}`.
pub const TOOL_REGISTER: &str = "tool.register";
/// Plugin → kernel: register a stage handler `{stage, scope, priority}`.
pub const STAGE_REGISTER: &str = "stage.register";
/// Plugin → kernel: register an output channel `{name, caps, desc, def}`.
pub const OUTPUT_REGISTER: &str = "output.register";
/// Plugin → kernel: remove an output channel it registered `{name}`.
pub const OUTPUT_UNREGISTER: &str = "output.unregister";
/// Plugin → kernel: register an input channel `{name, def}`.
pub const INPUT_REGISTER: &str = "input.register";
/// Plugin → kernel: whether the supervisor restarts it after a crash `{enabled}`.
pub const LIFECYCLE_AUTO_RESTART: &str = "lifecycle.autoRestart";
/// Plugin → kernel, a notification: one log line `{level, message}`.
pub const LOG: &str = "log";
/// Plugin → kernel: inject a text input `{source, channel, text, options?}`.
pub const IO_INJECT_TEXT: &str = "io.injectText";
/// Plugin → kernel: inject an interrupt `{source, channel, text, options?}`.
pub const IO_INJECT_INTERRUPT: &str = "io.injectInterrupt";
/// Plugin → kernel: inject an input and wait for its reply → `{reply}`.
pub const IO_INJECT_INPUT_SYNC: &str = "io.injectInputSync";
/// Plugin → kernel: inject an input that brings media `{channel, text, blocks, options?}`: the
/// blocks reach the model with this turn's message and are kept in the media store.
pub const IO_INJECT_MEDIA: &str = "io.injectMedia";
/// Plugin → kernel: [`IO_INJECT_MEDIA`], and wait for its reply → `{reply, request_id}`.
pub const IO_INJECT_MEDIA_SYNC: &str = "io.injectMediaSync";
/// Plugin → kernel, from inside a tool's call: media to add to that call's result `{blocks,
/// ctx: {call_id}}` → `{}`.
pub const IO_SET_TOOL_BLOCKS: &str = "io.setToolBlocks";
/// Plugin → kernel: an interrupt that brings media (the params of [`IO_INJECT_MEDIA`]).
pub const IO_INJECT_INTERRUPT_MEDIA: &str = "io.injectInterruptMedia";
/// Plugin → kernel: graph recall `{query, depth}` → `{entities, relations}`.
pub const MEMORY_RECALL: &str = "memory.recall";
/// Plugin → kernel: document search `{text, top_k}` → `{docs}`.
pub const DOC_QUERY: &str = "doc.query";
/// Plugin → kernel: the plugin's own setting `{key}` → `{value}`.
pub const SETTINGS_GET: &str = "settings.get";
/// Plugin → kernel: the plugin's own data directory → `{dir}` (created, owner-only).
pub const SETTINGS_DATA_DIR: &str = "settings.dataDir";
/// Plugin → kernel: set the plugin's own setting `{key, value}`.
pub const SETTINGS_SET: &str = "settings.set";
/// Plugin → kernel: subscribe to event types `{types}`.
pub const EVENTS_SUBSCRIBE: &str = "events.subscribe";
/// Plugin → kernel: the configured LLM sources → `{sources}`.
pub const LLM_LIST_SOURCES: &str = "llm.listSources";
/// Plugin → kernel: the loaded plugins → `{plugins}`.
pub const PLUGIN_LIST_LOADED: &str = "plugin.listLoaded";
/// Plugin → kernel: an exchange-arena block for a large result `{size}` → `{ref}`.
pub const ARENA_ALLOC: &str = "arena.alloc";
/// Plugin → kernel: give back a block it got from `arena.alloc` `{ref}` → `{}`.
pub const ARENA_FREE: &str = "arena.free";
/// Plugin → kernel: take the kernel's lock of one stage `{stage}` → `{}` (waits up to 30 s).
pub const STAGE_LOCK: &str = "stage.lock";
/// Plugin → kernel: release the lock `stage.lock` took `{stage}` → `{}`.
pub const STAGE_UNLOCK: &str = "stage.unlock";
/// Plugin → kernel: long-term memory write `{triples}` → `{}`.
pub const MEMORY_COMMIT: &str = "memory.commit";
/// Plugin → kernel: one completion from an LLM source `{messages, source?}` → `{text}`.
pub const LLM_COMPLETE: &str = "llm.complete";
/// Never offered: external plugins subscribe to events but do not publish them.
pub const EVENTS_PUBLISH: &str = "events.publish";
/// Submit an input and get its request id and stream tag at once (its reply: [`IO_REPLY`]).
pub const IO_SUBMIT: &str = "io.submit";
/// Wait (up to a timeout) for the reply of an input [`IO_SUBMIT`] started.
pub const IO_REPLY: &str = "io.reply";
/// The stop button: cut the running answer and drop the queued inputs.
pub const IO_STOP: &str = "io.stop";
/// The journaled inputs of a channel and their replies, newest last.
pub const IO_HISTORY: &str = "io.history";
/// An operator's control request (status, sources, plugins), as the client socket takes it.
pub const KERNEL_CONTROL: &str = "kernel.control";
/// Cold-context entries matching a query by keyword, with their ids, scores and times.
pub const MEMORY_SEARCH: &str = "memory.search";
/// Deletes one cold-context entry by id, durably, with an audit record.
pub const MEMORY_FORGET: &str = "memory.forget";
/// Plugin → kernel: inject a text input kept out of long-term memory (same params as
/// [`IO_INJECT_TEXT`]).
pub const IO_INJECT_TEXT_NO_MEM: &str = "io.injectTextNoMem";
/// Plugin → kernel: what long-term memory holds → counts and the distiller's state.
pub const MEMORY_INTROSPECT: &str = "memory.introspect";
/// Plugin → kernel: merge two names of one entity `{source, target, keep_apart?}`.
pub const MEMORY_MERGE: &str = "memory.merge";
/// Plugin → kernel: end or forget the facts criteria select `{criteria, mode?}` → `{purged}`.
pub const MEMORY_PURGE: &str = "memory.purge";
/// Plugin → kernel: keep a note in long-term memory `{doc: {content, summary?}}` → `{text}`.
pub const DOC_INSERT: &str = "doc.insert";
/// Plugin → kernel: a note with stored media `{doc: {content, summary?}, media: [sha256]}`.
pub const DOC_INSERT_WITH_MEDIA: &str = "doc.insertWithMedia";
/// Plugin → kernel: delete one long-term memory entry `{id}` → `{removed}`.
pub const DOC_REMOVE: &str = "doc.remove";
/// Plugin → kernel: how many entries long-term memory holds → `{entries}`.
pub const DOC_STATS: &str = "doc.stats";
/// Plugin → kernel: keep an event the plugin saw (a message in a group chat, a line of a
/// device's log) in long-term memory `{event: {input, response?, source?, timestamp_ms?}}`
/// → `{id}`.
pub const TEXTMEMORY_APPEND: &str = "textmemory.append";
/// Plugin → kernel: the knowledge base by meaning and keywords `{query, top_k?}` → `{results}`.
pub const KNOWLEDGE_SEARCH: &str = "knowledge.search";
/// Plugin → kernel: write a knowledge base document `{name, content, replace?}`.
pub const KNOWLEDGE_ADD: &str = "knowledge.add";
/// Plugin → kernel: the knowledge base's document names → `{names}`.
pub const KNOWLEDGE_LIST: &str = "knowledge.list";
/// Plugin → kernel: what is known about a person `{name}`.
pub const SOCIAL_GET_PERSON: &str = "social.getPerson";
/// Plugin → kernel: the people around a person `{name, depth?}` → `{links}`.
pub const SOCIAL_GET_NETWORK: &str = "social.getNetwork";
/// Plugin → kernel: one trait of a person, now and before `{name, trait}`.
pub const SOCIAL_GET_TRAIT: &str = "social.getTrait";
/// Plugin → kernel: a person's direct relations to other people `{name}` → `{relations}`.
pub const SOCIAL_GET_RELATIONS: &str = "social.getRelations";
/// Plugin → kernel: the people the graph knows `{limit?}` → `{persons}`.
pub const SOCIAL_LIST_PERSONS: &str = "social.listPersons";
/// Plugin → kernel: stop wanting event types `{types}`.
pub const EVENTS_UNSUBSCRIBE: &str = "events.unsubscribe";
/// Plugin → kernel: restart one plugin `{name}`.
pub const PLUGIN_RELOAD_ONE: &str = "plugin.reloadOne";
/// Plugin → kernel: whether a plugin is disabled `{name}` → `{disabled}`.
pub const PLUGIN_IS_DISABLED: &str = "plugin.isDisabled";
/// Plugin → kernel: try this LLM source first from now on `{source}` (`""`: by priority);
/// kept across restarts → `{source}`.
pub const LLM_SET_SOURCE: &str = "llm.setSource";
/// Plugin → kernel: the LLM source the next request tries first → `{source}`.
pub const LLM_CURRENT_SOURCE: &str = "llm.currentSource";
