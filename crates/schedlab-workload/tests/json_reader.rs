//! The json-c dialect reader: leniencies, positions, ordered multimap, and
//! broken input (each error has a position and says what was expected).

use proptest::prelude::*;
use schedlab_workload::json::{parse, parse_with, Kind, Options, Pos, MAX_DEPTH};

fn err(text: &str) -> String {
    parse(text).expect_err("should fail").to_string()
}

#[test]
fn ordered_multimap_with_positions() {
    let v = parse("{\n  \"run\": 1000,\n  'sleep': 500,\n  \"run\": 2000 }").unwrap();
    let Kind::Object(m) = v.kind else { panic!() };
    let keys: Vec<_> = m.iter().map(|m| (m.key.as_str(), m.key_pos)).collect();
    assert_eq!(
        keys,
        [
            ("run", Pos { line: 2, col: 3 }),
            ("sleep", Pos { line: 3, col: 3 }),
            ("run", Pos { line: 4, col: 3 })
        ]
    );
    assert_eq!(m[2].value.kind, Kind::Int(2000));
    assert_eq!(m[2].value.pos, Pos { line: 4, col: 10 });
}

#[test]
fn leniencies() {
    let v = parse(
        "// head\n{ /* a */ \"a\": [1, 2.5, -3e2, ], 'b': TRUE, \"c\": Null, \"d\": fAlse, }",
    )
    .unwrap();
    let Kind::Object(m) = v.kind else { panic!() };
    let Kind::Array(a) = &m[0].value.kind else {
        panic!()
    };
    assert_eq!(
        a.iter().map(|x| x.kind.clone()).collect::<Vec<_>>(),
        [Kind::Int(1), Kind::Double(2.5), Kind::Double(-300.0)]
    );
    assert_eq!(m[1].value.kind, Kind::Bool(true));
    assert_eq!(m[2].value.kind, Kind::Null);
    assert_eq!(m[3].value.kind, Kind::Bool(false));
}

#[test]
fn escapes() {
    let v = parse(r#"["a\"b\n\u00e9\ud83d\ude00", 'it\'s']"#).unwrap();
    let Kind::Array(a) = v.kind else { panic!() };
    assert_eq!(a[0].kind, Kind::Str("a\"b\né😀".into()));
    assert_eq!(a[1].kind, Kind::Str("it's".into()));
}

#[test]
fn bare_keys_only_when_allowed() {
    assert_eq!(
        err("{\"suspend\", \"run\": 1}"),
        "1:11: expected ':' after key \"suspend\", found ','"
    );
    let v = parse_with(
        "{\"suspend\",\n \"x\"}",
        Options {
            allow_bare_keys: true,
        },
    )
    .unwrap();
    let Kind::Object(m) = v.kind else { panic!() };
    assert_eq!(
        (m[0].value.kind.clone(), m[1].value.kind.clone()),
        (Kind::Bare, Kind::Bare)
    );
}

#[test]
fn empty_file() {
    assert_eq!(
        err(""),
        "1:1: expected a JSON value, found end of file (the file is empty)"
    );
    assert_eq!(
        err("  /* only a comment */\n"),
        "2:1: expected a JSON value, found end of file (the file is empty)"
    );
}

#[test]
fn unterminated_string() {
    assert_eq!(
        err("{\n  \"tasks\": \"abc\n}"),
        "2:12: unterminated string (expected closing \" before end of file)"
    );
}

#[test]
fn unterminated_comment() {
    assert_eq!(
        err("{ /* x"),
        "1:3: unterminated /* comment (expected */ before end of file)"
    );
}

#[test]
fn missing_colon() {
    assert_eq!(
        err("{\"a\" 1}"),
        "1:6: expected ':' after key \"a\", found '1'"
    );
}

#[test]
fn missing_comma() {
    assert_eq!(
        err("{\"a\": 1 \"b\": 2}"),
        "1:9: expected ',' or '}' in object, found '\"'"
    );
    assert_eq!(err("[1 2]"), "1:4: expected ',' or ']' in array, found '2'");
}

#[test]
fn bad_numbers() {
    assert_eq!(err("[1.]"), "1:2: bad number '1.'");
    assert_eq!(err("[-]"), "1:2: bad number '-'");
    assert_eq!(err("[1e]"), "1:2: bad number '1e'");
    assert_eq!(err("[12ab]"), "1:2: bad number '12ab'");
    assert_eq!(
        err("[99999999999999999999]"),
        "1:2: integer '99999999999999999999' is out of range"
    );
}

#[test]
fn unquoted_words_and_keys() {
    assert_eq!(
        err("[yes]"),
        "1:2: expected a value, found 'yes' (strings need quotes)"
    );
    assert_eq!(
        err("{run: 1}"),
        "1:2: expected a quoted key or '}', found 'r'"
    );
}

#[test]
fn garbage_after_document() {
    assert_eq!(
        err("{} x"),
        "1:4: expected end of file after the document, found 'x'"
    );
    assert_eq!(
        err("{}\n}"),
        "2:1: expected end of file after the document, found '}'"
    );
}

#[test]
fn bad_escape() {
    assert_eq!(err(r#"["\q"]"#), "1:4: bad escape in string");
    assert_eq!(
        err(r#"["\u12"]"#),
        "1:4: bad \\u escape (expected 4 hex digits)"
    );
}

#[test]
fn nesting_limit() {
    let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
    assert!(parse(&ok).is_ok());
    let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
    assert_eq!(
        parse(&deep).unwrap_err().to_string(),
        format!(
            "1:{}: nesting deeper than 128 levels of objects and arrays",
            MAX_DEPTH + 1
        )
    );
    // Far deeper input fails the same way instead of overflowing the stack.
    assert!(parse(&"{\"a\":".repeat(100_000)).is_err());
}

#[test]
fn lone_slash() {
    assert_eq!(err("{} /"), "1:4: expected a comment after '/'");
}

proptest! {
    /// Any input: no panic, and an error always points inside the text
    /// (or just after it).
    #[test]
    fn never_panics(s in "[{}\\[\\]\"':,/*a-zA-Z0-9 .\\-\n\\\\]{0,64}") {
        if let Err(e) = parse(&s) {
            let lines = s.split('\n').count() as u32;
            prop_assert!(e.pos.line >= 1 && e.pos.line <= lines.max(1));
            prop_assert!(e.pos.col >= 1);
            prop_assert!(!e.msg.contains('\n'));
        }
    }

    /// Cutting a valid document anywhere short of its end breaks it.
    #[test]
    fn truncation_is_an_error(cut in 0usize..60) {
        let doc = "{ \"tasks\": { \"t\": { \"run\": 10, \"timer\": { \"period\": 5 } } } }";
        let cut = cut.min(doc.len() - 1);
        prop_assert!(parse(&doc[..cut]).is_err());
    }
}
