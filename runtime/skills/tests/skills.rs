//! Skills from real folders: what the prompt carries, what `skill_load` returns, bundled files
//! confined to the folder and never run, and malformed skills reported by file and line.

use hearth_skills::{SKILL_LOAD, SkillError, load_dir, register_skill_load};
use hearth_stages::{CallContext, HandlerError, ToolRegistry};
use hearth_testkit::fresh_dir;
use serde_json::json;
use std::path::Path;
use std::time::Duration;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, text).expect("write");
}

const PDF: &str = "---\nname: pdf-forms\ndescription: >\n  Fill in PDF forms; use when the user\n  mentions a form to complete.\nlicense: MIT\nmetadata:\n  author: someone\n---\n# Filling forms\n\nRun `scripts/fill.py` through the shell tool.\n";

#[test]
fn only_names_and_descriptions_reach_the_prompt_and_the_body_comes_on_request() {
    let root = fresh_dir("skills-ok");
    write(&root, "pdf-forms/SKILL.md", PDF);
    write(&root, "pdf-forms/scripts/fill.py", "print('filled')\n");
    write(
        &root,
        "notes/SKILL.md",
        "---\nname: notes\ndescription: \"Keep meeting notes tidy.\"\n---\nUse headings.\n",
    );
    let (skills, errors) = load_dir(&root);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(skills.len(), 2);
    let tools = ToolRegistry::new();
    register_skill_load(&tools, skills).expect("registers");
    let def = tools.get(SKILL_LOAD).expect("skill_load").def;
    assert!(
        def.description.contains(
            "- pdf-forms: Fill in PDF forms; use when the user mentions a form to complete."
        ),
        "{}",
        def.description
    );
    assert!(
        def.description
            .contains("- notes: Keep meeting notes tidy."),
        "{}",
        def.description
    );
    assert!(
        !def.description.contains("Filling forms"),
        "the body stays out of the prompt"
    );
    assert_eq!(tools.entries()[0].owner, "skill:skills");

    let call = CallContext::kernel(Duration::from_secs(5));
    let loaded = tools
        .execute(&call, SKILL_LOAD, &json!({"name": "pdf-forms"}))
        .expect("loads");
    assert!(
        loaded["instructions"]
            .as_str()
            .unwrap()
            .starts_with("# Filling forms")
    );
    assert_eq!(loaded["files"], json!(["scripts/fill.py"]));
    let file = tools
        .execute(
            &call,
            SKILL_LOAD,
            &json!({"name": "pdf-forms", "file": "scripts/fill.py"}),
        )
        .expect("reads the bundled file");
    assert_eq!(
        file["text"], "print('filled')\n",
        "returned as text, not run"
    );
    for escape in [
        "../notes/SKILL.md",
        "/etc/passwd",
        "scripts/../../notes/SKILL.md",
    ] {
        let refused = tools.execute(
            &call,
            SKILL_LOAD,
            &json!({"name": "pdf-forms", "file": escape}),
        );
        assert!(
            matches!(refused, Err(HandlerError::InvalidArguments(_))),
            "{escape}: {refused:?}"
        );
    }
    let unknown = tools.execute(&call, SKILL_LOAD, &json!({"name": "nope"}));
    assert!(
        matches!(&unknown, Err(HandlerError::InvalidArguments(m)) if m.contains("notes, pdf-forms")),
        "{unknown:?}"
    );
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn a_malformed_skill_is_reported_with_file_and_line_and_skipped() {
    let root = fresh_dir("skills-bad");
    write(
        &root,
        "good/SKILL.md",
        "---\nname: good\ndescription: Works.\n---\nbody\n",
    );
    write(&root, "no-fence/SKILL.md", "name: no-fence\n");
    write(
        &root,
        "unclosed/SKILL.md",
        "---\nname: unclosed\ndescription: x\n",
    );
    write(
        &root,
        "bad-name/SKILL.md",
        "---\ndescription: fine\nname: Bad_Name\n---\n",
    );
    write(&root, "no-desc/SKILL.md", "---\nname: no-desc\n---\nbody\n");
    write(
        &root,
        "junk/SKILL.md",
        "---\nname: junk\nthis is not yaml\ndescription: x\n---\n",
    );
    write(
        &root,
        "quote/SKILL.md",
        "---\nname: quote\ndescription: \"never closed\n---\n",
    );
    write(
        &root,
        "other/SKILL.md",
        "---\nname: elsewhere\ndescription: x\n---\n",
    );
    let (skills, errors) = load_dir(&root);
    assert_eq!(
        skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["good"]
    );
    let text: Vec<String> = errors.iter().map(SkillError::to_string).collect();
    let want = [
        ("bad-name/SKILL.md:3:", "lowercase"),
        ("junk/SKILL.md:3:", "key: value"),
        ("no-desc/SKILL.md:3:", "description"),
        ("no-fence/SKILL.md:1:", "---"),
        ("other/SKILL.md:2:", "differs from the folder"),
        ("quote/SKILL.md:3:", "unterminated"),
        ("unclosed/SKILL.md:", "never closed"),
    ];
    assert_eq!(text.len(), want.len(), "{text:#?}");
    for (at, what) in want {
        assert!(
            text.iter().any(|t| t.contains(at) && t.contains(what)),
            "{at} {what}: {text:#?}"
        );
    }
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn without_skills_no_tool_is_registered() {
    let tools = ToolRegistry::new();
    let (skills, errors) = load_dir(Path::new("/nonexistent/skills"));
    assert!(skills.is_empty() && errors.is_empty());
    register_skill_load(&tools, skills).expect("nothing to do");
    assert!(tools.is_empty());
}
