use super::*;
use proptest::prelude::*;
use serde_json::json;

fn lua() -> mlua::Lua {
    let lua = mlua::Lua::new();
    crate::adapter::json::install(&lua, usize::MAX).expect("json installs");
    lua
}

fn eval(lua: &mlua::Lua, code: &str) -> String {
    lua.load(code)
        .eval::<String>()
        .unwrap_or_else(|e| panic!("{code}: {e}"))
}

#[test]
fn empty_table_is_an_object_and_sequences_are_arrays() {
    let lua = lua();
    assert_eq!(eval(&lua, "return json.encode({})"), "{}");
    assert_eq!(eval(&lua, "return json.encode({1, 2})"), "[1,2]");
    assert_eq!(eval(&lua, "return json.encode({a = 1})"), r#"{"a":1}"#);
    assert_eq!(eval(&lua, "return json.encode({1, nil, 3})"), "[1,null,3]");
    assert_eq!(
        eval(&lua, "return json.encode({[1] = 'a', [100] = 'b'})"),
        r#"{"1":"a","100":"b"}"#
    );
    assert_eq!(
        eval(&lua, "return json.encode({1, 2, x = true})"),
        r#"{"1":1,"2":2,"x":true}"#
    );
    assert_eq!(eval(&lua, "return json.encode(json.array())"), "[]");
    assert_eq!(eval(&lua, "return json.encode(json.array({}))"), "[]");
    assert_eq!(
        eval(&lua, "return json.encode({list = json.array(), obj = {}})"),
        r#"{"list":[],"obj":{}}"#
    );
    assert_eq!(
        eval(
            &lua,
            "return tostring(json.is_array({1})) .. tostring(json.is_array({})) .. tostring(json.is_array(json.array()))"
        ),
        "truefalsetrue"
    );
}

#[test]
fn scalars_and_unencodable_values() {
    let lua = lua();
    assert_eq!(eval(&lua, "return json.encode(json.null)"), "null");
    assert_eq!(eval(&lua, "return json.encode(nil)"), "null");
    assert_eq!(eval(&lua, "return json.encode('a\"b\\n')"), r#""a\"b\n""#);
    assert_eq!(
        eval(&lua, "return json.encode(3.0)"),
        "3",
        "whole floats are counts"
    );
    assert_eq!(eval(&lua, "return json.encode(1.5)"), "1.5");
    assert_eq!(eval(&lua, "return json.encode(-7)"), "-7");
    assert_eq!(eval(&lua, "return json.encode(print)"), "null");
    assert_eq!(eval(&lua, "return json.encode({f = print})"), "null");
    assert_eq!(eval(&lua, "return json.encode(0/0)"), "null");
    assert_eq!(eval(&lua, "return json.encode(math.huge)"), "null");
    assert_eq!(
        eval(&lua, "local t = {} t.self = t return json.encode(t)"),
        "null",
        "a cycle"
    );
    assert_eq!(eval(&lua, "return json.encode({[true] = 1})"), "null");
}

#[test]
fn decode_keeps_nulls_integers_and_array_shape() {
    let lua = lua();
    let doc = r#"{"a":[1,null,3],"b":null,"c":{"d":[],"e":{}},"f":1.5,"g":-2}"#;
    lua.globals().set("doc", doc).expect("set");
    let out = eval(&lua, "return json.encode(json.decode(doc))");
    assert_eq!(
        parse(&out),
        parse(doc),
        "round trip with nested nulls and empty containers"
    );
    assert_eq!(
        eval(
            &lua,
            "local v = json.decode(doc) return tostring(#v.a) .. tostring(v.b == json.null) .. tostring(v.a[2] == json.null)"
        ),
        "3truetrue"
    );
    assert_eq!(
        eval(
            &lua,
            "local v = json.decode(doc) return math.type(v.g) .. ',' .. math.type(v.f) .. ',' .. math.type(v.a[1])"
        ),
        "integer,float,integer"
    );
    assert_eq!(
        eval(
            &lua,
            "return tostring(json.decode('{oops')) .. tostring(json.decode(42)) .. tostring(json.decode(''))"
        ),
        "nilnilnil"
    );
    assert_eq!(
        eval(&lua, "return tostring(json.decode('null') == json.null)"),
        "true"
    );
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        // Dyadic fractions print in few digits, which serde_json parses exactly (its default
        // parser can be one ulp off on 17-digit numbers, which is not what is tested here).
        (-1_000_000i64..1_000_000, 0u32..4)
            .prop_map(|(m, d)| json!(m as f64 + f64::from(2 * d + 1) / 8.0)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// decode then encode gives back the same document, whatever nulls, empty arrays and
    /// empty objects it holds.
    #[test]
    fn decode_encode_round_trips(doc in arb_json()) {
        let lua = lua();
        lua.globals().set("doc", doc.to_string()).expect("set");
        let out = eval(&lua, "return json.encode(json.decode(doc))");
        prop_assert_eq!(parse(&out), doc);
    }
}
