//! End-to-end tests of `hearthd` and `hearth`: real daemon processes, the real Unix socket, real
//! HTTP + SSE on loopback (a scripted OpenAI-compatible server) and the real embedded model.

mod harness;
mod raw;

mod daemon_adapters;
mod daemon_cli;
mod daemon_consolidation;
mod daemon_crash;
mod daemon_distill;
mod daemon_fallback;
mod daemon_first_words;
mod daemon_flood;
mod daemon_forget_answering;
mod daemon_graph;
mod daemon_graph_forget;
mod daemon_hangup;
mod daemon_journal;
mod daemon_knowledge;
mod daemon_lua;
mod daemon_mcp;
mod daemon_media;
mod daemon_memory;
mod daemon_people;
mod daemon_plugin_media;
mod daemon_plugin_memory;
mod daemon_plugins;
mod daemon_real_model;
mod daemon_recovery;
mod daemon_settings;
mod daemon_shutdown;
mod daemon_skills;
mod daemon_socket;
mod daemon_source_choice;
mod daemon_stop;
mod daemon_stream_order;
mod daemon_systemd;
mod daemon_threads;
mod daemon_tool_media;
mod daemon_tool_memory;
mod daemon_web;
mod daemon_web_clients;
mod daemon_web_memory;
mod daemon_zone;
