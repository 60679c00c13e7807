//! The registry over a real SQLite file.

use hearth_settings::{Access, SettingDef, SettingKind, Settings, SettingsError};
use serde_json::json;

fn def(key: &str, kind: SettingKind, default: serde_json::Value) -> SettingDef {
    SettingDef::new(key, kind, default, "test setting")
}

#[test]
fn defaults_apply_until_set_and_a_new_default_never_overwrites_a_user_value() {
    let dir = tempfile::tempdir().expect("dir");
    {
        let s = Settings::open(dir.path()).expect("open");
        s.define(def("core.workers", SettingKind::Integer, json!(2)))
            .unwrap();
        assert_eq!(s.get("core.workers").unwrap(), json!(2));
        s.set("core.workers", json!(4)).unwrap();
        assert_eq!(s.get("core.workers").unwrap(), json!(4));
        // An undefined key reads as null until set.
        assert_eq!(s.get("core.unknown").unwrap(), json!(null));
    }
    // Reopened (a restart), with a new default: the user's 4 stays.
    let s = Settings::open(dir.path()).expect("reopen");
    s.define(def("core.workers", SettingKind::Integer, json!(8)))
        .unwrap();
    assert_eq!(s.get("core.workers").unwrap(), json!(4));
    // Reset: back to the (new) default.
    assert!(s.reset_as(&Access::kernel(), "core.workers").unwrap());
    assert_eq!(s.get("core.workers").unwrap(), json!(8));
    assert!(!s.reset_as(&Access::kernel(), "core.workers").unwrap());
    assert!(dir.path().join("settings.db").exists());
}

#[test]
fn values_are_typed_and_a_refused_value_keeps_the_old_one() {
    let dir = tempfile::tempdir().expect("dir");
    let s = Settings::open(dir.path()).expect("open");
    s.define(def("core.name", SettingKind::String, json!("hearth")))
        .unwrap();
    s.define(def("core.roots", SettingKind::StringList, json!([])))
        .unwrap();
    s.set("core.name", json!("den")).unwrap();
    let err = s.set("core.name", json!(3)).expect_err("typed");
    assert!(matches!(err, SettingsError::WrongType { .. }), "{err}");
    assert!(err.to_string().contains("core.name") && err.to_string().contains("a string"));
    assert_eq!(s.get("core.name").unwrap(), json!("den"));
    assert!(s.set("core.roots", json!(["/a", 1])).is_err());
    s.set("core.roots", json!(["/a", "/b"])).unwrap();
    // A default of the wrong type is refused at definition.
    assert!(
        s.define(def("core.bad", SettingKind::Bool, json!("yes")))
            .is_err()
    );
    for bad in ["workers", "Core.x", "plugin.x", "core..x"] {
        assert!(
            matches!(s.set(bad, json!(1)), Err(SettingsError::BadKey { .. })),
            "{bad}"
        );
    }
}

#[test]
fn a_plugin_touches_only_its_own_namespace_unless_granted() {
    let dir = tempfile::tempdir().expect("dir");
    let s = Settings::open(dir.path()).expect("open");
    let timer = Access::plugin("timer");
    s.define_as(&timer, def("max", SettingKind::Integer, json!(20)))
        .unwrap();
    assert_eq!(s.get("plugin.timer.max").unwrap(), json!(20));
    s.set_as(&timer, "max", json!(5)).unwrap();
    s.set_as(&timer, "plugin.timer.label", json!("t")).unwrap();
    assert_eq!(s.get("plugin.timer.max").unwrap(), json!(5));
    for foreign in ["core.socket", "plugin.files.roots"] {
        let err = s.get_as(&timer, foreign).expect_err("foreign");
        assert!(matches!(err, SettingsError::Denied { .. }), "{err}");
        assert!(err.to_string().contains("plugin timer"), "{err}");
        assert!(s.set_as(&timer, foreign, json!(1)).is_err());
    }
    assert!(
        s.define_as(&timer, def("core.x", SettingKind::Bool, json!(true)))
            .is_err()
    );
    assert!(s.list_as(&timer, "core.").is_err());
    let mine: Vec<String> = s
        .list_as(&timer, "")
        .unwrap()
        .into_iter()
        .map(|x| x.key)
        .collect();
    assert_eq!(mine, ["plugin.timer.label", "plugin.timer.max"]);
    // Granted settings_cross: every key.
    s.set("plugin.files.roots", json!(["/srv"])).unwrap();
    let cross = Access::plugin("timer").cross();
    assert_eq!(
        s.get_as(&cross, "plugin.files.roots").unwrap(),
        json!(["/srv"])
    );
    let all = s.list_as(&Access::kernel(), "plugin.").unwrap();
    assert_eq!(all.len(), 3);
    assert!(
        all.iter()
            .any(|x| x.key == "plugin.timer.max" && x.is_set && x.def.is_some())
    );
}

#[test]
fn the_file_has_one_owner() {
    let dir = tempfile::tempdir().expect("dir");
    let first = Settings::open(dir.path()).expect("open");
    first.set("core.a", json!(1)).unwrap();
    let err = Settings::open(dir.path()).expect_err("second owner");
    assert!(matches!(err, SettingsError::Busy { .. }), "{err}");
    drop(first);
    let again = Settings::open(dir.path()).expect("free again");
    assert_eq!(again.get("core.a").unwrap(), json!(1));
}

#[test]
fn precedence_is_default_then_file_then_user_and_list_says_which() {
    use hearth_settings::Origin;
    let dir = tempfile::tempdir().expect("dir");
    let s = Settings::open(dir.path()).expect("open");
    s.define(def("core.a", SettingKind::Integer, json!(1)))
        .unwrap();
    s.define(def("core.b", SettingKind::Integer, json!(1)))
        .unwrap();
    s.define(def("core.c", SettingKind::Integer, json!(1)))
        .unwrap();
    s.set_file_value("core.b", json!(2)).unwrap();
    s.set_file_value("core.c", json!(2)).unwrap();
    s.set("core.c", json!(3)).unwrap();
    // A file value of the wrong type is refused where it is handed over.
    assert!(matches!(
        s.set_file_value("core.a", json!("x")),
        Err(SettingsError::WrongType { .. })
    ));
    let shown: Vec<(String, serde_json::Value, Origin, Option<serde_json::Value>)> = s
        .list_as(&Access::kernel(), "core.")
        .unwrap()
        .into_iter()
        .map(|x| (x.key, x.value, x.origin, x.file_value))
        .collect();
    assert_eq!(
        shown,
        [
            ("core.a".into(), json!(1), Origin::Default, None),
            ("core.b".into(), json!(2), Origin::File, None),
            ("core.c".into(), json!(3), Origin::User, Some(json!(2))),
        ]
    );
    // Resetting the user value uncovers the file's, not the default.
    s.reset_as(&Access::kernel(), "core.c").unwrap();
    assert_eq!(s.get("core.c").unwrap(), json!(2));
}

#[test]
fn setting_through_a_definition_reads_text_by_type_and_refuses_unknown_keys() {
    use hearth_settings::SetValue;
    let dir = tempfile::tempdir().expect("dir");
    let s = Settings::open(dir.path()).expect("open");
    let kernel = Access::kernel();
    s.define(def("core.name", SettingKind::String, json!("hearth")))
        .unwrap();
    s.define(def("core.turns", SettingKind::Integer, json!(10)))
        .unwrap();
    s.define(def("core.roots", SettingKind::StringList, json!(null)))
        .unwrap();
    assert_eq!(s.get("core.roots").unwrap(), json!(null), "no default");
    // Text that looks like a number is still a string for a string key.
    let (v, _) = s
        .set_defined_as(&kernel, "core.name", SetValue::Text("42"))
        .unwrap();
    assert_eq!(v, json!("42"));
    s.set_defined_as(&kernel, "core.name", SetValue::Text("\"den\""))
        .unwrap();
    assert_eq!(s.get("core.name").unwrap(), json!("den"));
    s.set_defined_as(&kernel, "core.turns", SetValue::Text("4"))
        .unwrap();
    let err = s
        .set_defined_as(&kernel, "core.turns", SetValue::Text("four"))
        .expect_err("not an integer");
    assert!(matches!(err, SettingsError::WrongType { .. }), "{err}");
    assert!(
        s.set_defined_as(&kernel, "core.turns", SetValue::Text("4.5"))
            .is_err()
    );
    assert_eq!(s.get("core.turns").unwrap(), json!(4), "old value kept");
    s.set_defined_as(&kernel, "core.roots", SetValue::Text(r#"["/srv"]"#))
        .unwrap();
    let err = s
        .set_defined_as(&kernel, "core.nothing", SetValue::Text("1"))
        .expect_err("unknown");
    assert!(
        matches!(err, SettingsError::Unknown { .. }) && err.to_string().contains("core.nothing"),
        "{err}"
    );
    assert_eq!(
        s.get("core.nothing").unwrap(),
        json!(null),
        "nothing stored"
    );
}

#[test]
fn a_secret_is_hidden_in_listings_and_read_only_by_its_key() {
    let dir = tempfile::tempdir().expect("dir");
    let s = Settings::open(dir.path()).expect("open");
    s.define(def("plugin.web.api_key", SettingKind::String, json!("")).secret())
        .unwrap();
    s.define(def(
        "plugin.web.bind",
        SettingKind::String,
        json!("127.0.0.1:8080"),
    ))
    .unwrap();
    let kernel = Access::kernel();
    // Unset, a listing may say so.
    let unset = s.list_as(&kernel, "plugin.web.").unwrap();
    assert_eq!(unset[0].value, json!(""));
    s.set("plugin.web.api_key", json!("hk-0123456789")).unwrap();
    let listed = s.list_as(&kernel, "plugin.web.").unwrap();
    let text = serde_json::to_string(&listed).unwrap();
    assert!(!text.contains("hk-0123456789"), "{text}");
    assert_eq!(listed[0].value, json!(hearth_settings::HIDDEN));
    assert_eq!(listed[1].value, json!("127.0.0.1:8080"), "the rest shows");
    // Reading the one key still gives it.
    assert_eq!(s.get("plugin.web.api_key").unwrap(), json!("hk-0123456789"));
    // A definition sent as JSON (a plugin's registerDef) carries the mark.
    let sent: SettingDef = serde_json::from_value(json!({
        "key": "plugin.web.session_secret", "kind": "string", "default": "",
        "description": "d", "secret": true
    }))
    .unwrap();
    assert!(sent.secret);
}
