//! The front matter of a SKILL.md: the subset of YAML the convention uses — `key: value`
//! lines, values plain, single- or double-quoted, or a `|`/`>` block of indented lines.
//! Keys other than those asked for are read and ignored (`license`, `allowed-tools`, …).

/// One key's value and the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    pub value: String,
    pub line: usize,
}

/// The fields of `lines` (the front matter without its `---` fences; `first` is the file
/// line of the first one), or the line and problem of the first line that is not YAML of
/// this subset.
pub(crate) fn parse(lines: &[&str], first: usize) -> Result<Vec<(String, Field)>, (usize, String)> {
    let mut out: Vec<(String, Field)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line_no = first + i;
        let line = lines[i];
        i += 1;
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            // Nested values (metadata maps, lists) of keys not asked for.
            if out.is_empty() {
                return Err((line_no, "indented line outside any key".into()));
            }
            continue;
        }
        let Some((key, rest)) = line.split_once(':') else {
            return Err((line_no, format!("expected `key: value`, found {line:?}")));
        };
        let key = key.trim();
        if key.is_empty() || key.contains(' ') {
            return Err((line_no, format!("{key:?} is not a key")));
        }
        let rest = rest.trim();
        let value = match rest {
            "|" | ">" | "|-" | ">-" => {
                let mut block = Vec::new();
                while i < lines.len()
                    && (lines[i].starts_with([' ', '\t']) || lines[i].trim().is_empty())
                {
                    block.push(lines[i].trim());
                    i += 1;
                }
                let sep = if rest.starts_with('|') { "\n" } else { " " };
                block.join(sep).trim().to_owned()
            }
            _ => unquote(rest).map_err(|p| (line_no, p))?,
        };
        if out.iter().any(|(k, _)| k == key) {
            return Err((line_no, format!("`{key}` is given twice")));
        }
        out.push((
            key.to_owned(),
            Field {
                value,
                line: line_no,
            },
        ));
    }
    Ok(out)
}

fn unquote(v: &str) -> Result<String, String> {
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q) {
            return inner
                .strip_suffix(q)
                .map(|s| s.replace("\\\"", "\"").replace("''", "'"))
                .ok_or_else(|| format!("unterminated {q}quoted{q} value"));
        }
    }
    Ok(v.to_owned())
}
