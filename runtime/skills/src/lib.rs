//! SKILL.md skills (the Agent Skills convention): a folder holding `SKILL.md` — YAML front
//! matter with `name` and `description`, then a Markdown body — and any bundled files.
//!
//! Only each skill's name and description enter the prompt, in the description of the
//! `skill_load` tool; the body (or a bundled file, as text) comes back when the model calls
//! `skill_load`, or at once in the turn whose input clearly asks for it (the [`auto_load`]
//! rule, a `pre_action` handler). Nothing a skill bundles is ever run by naming it: a script
//! runs only if an allowed tool runs it. A malformed skill is reported with its file and line and skipped.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod auto_load;
mod error;
mod front_matter;
mod skill;
mod tool;

pub use auto_load::register_skill_auto_load;
pub use error::SkillError;
pub use skill::{SKILL_FILE, Skill, load_dir, parse_skill};
pub use tool::{SKILL_LOAD, register_skill_load};
