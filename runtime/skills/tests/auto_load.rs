//! A skill's body in the turn whose input clearly asks for it: by its name or a strong match of
//! its description, in English and Chinese, never for an ordinary message, once per task, cut
//! to its share of the prompt.

use hearth_skills::auto_load::{AUTO_LOAD_OWNER, MAX_BODY_CHARS, SkillMatcher, instructions};
use hearth_skills::{Skill, register_skill_auto_load};
use hearth_stages::{CallContext, Stage, StageContext, StagePipeline};
use std::path::PathBuf;
use std::time::Duration;

fn skill(name: &str, description: &str, body: &str) -> Skill {
    Skill {
        name: name.into(),
        description: description.into(),
        body: body.into(),
        dir: PathBuf::from("/nowhere"),
        files: Vec::new(),
    }
}

fn skills() -> Vec<Skill> {
    vec![
        skill(
            "pdf-forms",
            "Fill in PDF forms and extract their fields; use when the user mentions a form.",
            "# Filling forms\nRead every field first.",
        ),
        skill(
            "meeting-notes",
            "Keep meeting notes tidy: agenda, decisions, action items.",
            "Use one heading per agenda item.",
        ),
        skill(
            "tea-brewing",
            "泡茶的水温和时间：绿茶、红茶、乌龙茶怎么泡。",
            "绿茶用八十度的水。",
        ),
    ]
}

fn chosen(input: &str) -> Option<String> {
    SkillMatcher::new(skills())
        .asked_for(input)
        .map(|s| s.name.clone())
}

#[test]
fn an_input_naming_a_skill_or_matching_its_description_strongly_asks_for_it() {
    assert_eq!(
        chosen("use pdf-forms on this").as_deref(),
        Some("pdf-forms")
    );
    assert_eq!(
        chosen("Can you do the meeting notes for today?").as_deref(),
        Some("meeting-notes")
    );
    assert_eq!(
        chosen("tidy up the agenda, decisions and action items").as_deref(),
        Some("meeting-notes")
    );
    assert_eq!(
        chosen("绿茶和乌龙茶的水温是多少").as_deref(),
        Some("tea-brewing")
    );
}

#[test]
fn ordinary_messages_load_nothing() {
    for input in [
        "hello",
        "hi there, how are you?",
        "what time is it?",
        "你好",
        "the form of the moon tonight",
        "take notes",
        "pdf-formsx is not a skill name",
    ] {
        assert_eq!(chosen(input), None, "{input}");
    }
}

#[test]
fn the_body_enters_the_context_once_and_a_long_one_is_cut() {
    let pipeline = StagePipeline::new();
    register_skill_auto_load(&pipeline, skills()).expect("registered");
    assert_eq!(pipeline.plugins(Stage::PreAction), [AUTO_LOAD_OWNER]);
    let call = CallContext::kernel(Duration::from_secs(10));
    let mut ctx = StageContext {
        raw_message: "please use pdf forms for my tax form".into(),
        ..StageContext::default()
    };
    pipeline.run(Stage::PreAction, &call, &mut ctx);
    // A later round of the same task runs the stage again on the same context.
    pipeline.run(Stage::PreAction, &call, &mut ctx);
    let bodies: Vec<&str> = ctx
        .context_msgs
        .iter()
        .filter(|m| m.role == "system" && m.content.contains("Read every field first."))
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(bodies.len(), 1, "{:?}", ctx.context_msgs);
    assert!(bodies[0].starts_with("Skill pdf-forms"), "{}", bodies[0]);

    let mut hello = StageContext {
        raw_message: "hello".into(),
        ..StageContext::default()
    };
    pipeline.run(Stage::PreAction, &call, &mut hello);
    assert!(hello.context_msgs.is_empty(), "{:?}", hello.context_msgs);

    let long = skill("long", "A long one.", &"x".repeat(MAX_BODY_CHARS * 2));
    let text = instructions(&long);
    assert!(text.len() < MAX_BODY_CHARS + 200, "{}", text.len());
    assert!(text.contains("skill_load {\"name\": \"long\"}"), "{text}");
    assert!(register_skill_auto_load(&pipeline, Vec::new()).is_none());
}
