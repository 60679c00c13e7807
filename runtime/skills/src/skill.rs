//! One skill as read from its folder, and every skill of a skills directory.

use crate::SkillError;
use crate::front_matter;
use std::path::{Path, PathBuf};

/// The file a skill folder must hold.
pub const SKILL_FILE: &str = "SKILL.md";

/// Longest description the convention allows.
const MAX_DESCRIPTION: usize = 1024;

/// A loaded skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// `^[a-z0-9-]{1,64}$`, unique among the skills.
    pub name: String,
    /// When to use it, as the model is told.
    pub description: String,
    /// The Markdown after the front matter.
    pub body: String,
    /// The skill's folder.
    pub dir: PathBuf,
    /// Bundled files, relative to the folder, sorted (SKILL.md itself left out).
    pub files: Vec<String>,
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// Reads `text`, the `SKILL.md` at `file`, into a skill living in `file`'s folder (its bundled
/// files are not listed here; see [`load_dir`]).
pub fn parse_skill(file: &Path, text: &str) -> Result<Skill, SkillError> {
    let bad = |line: usize, problem: String| SkillError::Malformed {
        file: file.to_owned(),
        line,
        problem,
    };
    let lines: Vec<&str> = text.lines().collect();
    if lines.first().map(|l| l.trim_end()) != Some("---") {
        return Err(bad(
            1,
            "SKILL.md must start with a `---` line opening the front matter (name, description)"
                .into(),
        ));
    }
    let close = lines
        .iter()
        .skip(1)
        .position(|l| l.trim_end() == "---")
        .map(|p| p + 1)
        .ok_or_else(|| {
            bad(
                lines.len().max(1),
                "the front matter is never closed by a `---` line".into(),
            )
        })?;
    let fields = front_matter::parse(&lines[1..close], 2).map_err(|(line, p)| bad(line, p))?;
    let get = |key: &str| {
        fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, f)| f.clone())
    };
    let name =
        get("name").ok_or_else(|| bad(close + 1, "no `name:` in the front matter".into()))?;
    if !valid_name(&name.value) {
        return Err(bad(
            name.line,
            format!(
                "name {:?} must be 1-64 lowercase letters, digits and inner hyphens",
                name.value
            ),
        ));
    }
    if let Some(folder) = file
        .parent()
        .and_then(|d| d.file_name())
        .and_then(|d| d.to_str())
        && folder != name.value
    {
        return Err(bad(
            name.line,
            format!(
                "name {:?} differs from the folder {folder:?}; rename one",
                name.value
            ),
        ));
    }
    let description = get("description")
        .ok_or_else(|| bad(close + 1, "no `description:` in the front matter".into()))?;
    if description.value.trim().is_empty() || description.value.chars().count() > MAX_DESCRIPTION {
        return Err(bad(
            description.line,
            format!(
                "the description must say when to use the skill, in 1-{MAX_DESCRIPTION} characters"
            ),
        ));
    }
    Ok(Skill {
        name: name.value,
        description: description.value,
        body: lines[close + 1..].join("\n").trim().to_owned(),
        dir: file.parent().map(Path::to_path_buf).unwrap_or_default(),
        files: Vec::new(),
    })
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> SkillError + '_ {
    move |source| SkillError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The files under `dir`, relative to `root`, sorted.
fn bundled(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), SkillError> {
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let path = entry.map_err(io(dir))?.path();
        if path.is_dir() {
            bundled(root, &path, out)?;
        } else if let Ok(rel) = path.strip_prefix(root)
            && rel != Path::new(SKILL_FILE)
        {
            out.push(rel.to_string_lossy().into_owned());
        }
    }
    out.sort();
    Ok(())
}

/// Every `<root>/<folder>/SKILL.md`, by name; a skill that does not load (or repeats a name)
/// is reported and skipped. A missing `root` holds no skills.
pub fn load_dir(root: &Path) -> (Vec<Skill>, Vec<SkillError>) {
    let (mut skills, mut errors): (Vec<Skill>, Vec<SkillError>) = (Vec::new(), Vec::new());
    let Ok(entries) = std::fs::read_dir(root) else {
        return (skills, errors);
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let file = dir.join(SKILL_FILE);
        let loaded = std::fs::read_to_string(&file)
            .map_err(io(&file))
            .and_then(|text| parse_skill(&file, &text))
            .and_then(|mut skill| {
                bundled(&dir, &dir, &mut skill.files)?;
                Ok(skill)
            });
        match loaded {
            Ok(skill) if skills.iter().any(|s| s.name == skill.name) => {
                errors.push(SkillError::Malformed {
                    file,
                    line: 1,
                    problem: format!("skill {} is defined twice", skill.name),
                });
            }
            Ok(skill) => skills.push(skill),
            Err(e) => errors.push(e),
        }
    }
    for e in &errors {
        tracing::error!("skill skipped: {e}");
    }
    (skills, errors)
}
