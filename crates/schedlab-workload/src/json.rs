//! A lenient JSON reader for json-c's non-strict dialect (formats-spec.md 1.2).
//!
//! This module owns the text → tree step and nothing else: it knows no rt-app
//! keys. It keeps what `serde_json` throws away and rt-app depends on:
//!
//! * objects are an **ordered multimap**: every member, in text order,
//!   repeated keys included (the rt-app layer applies workgen's rule);
//! * every value and every key carries its 1-based line and column
//!   (columns count characters, a tab is one column);
//! * integers (no `.`, `e`, `E` in the literal) and doubles stay distinct,
//!   because rt-app's getters reject `"run": 1000.0`.
//!
//! Accepted leniencies, as json-c's non-strict mode: `/* */` and `//`
//! comments wherever whitespace may appear, a trailing comma before `}` or
//! `]`, single-quoted strings and keys, `true`/`false`/`null` in any letter
//! case.
//!
//! Deviations from json-c, all stricter or documented:
//!
//! * text after the document (other than whitespace and comments) is an
//!   error; json-c's file reader ignores it;
//! * nesting is limited to [`MAX_DEPTH`] levels (json-c's default is 32, we
//!   allow more because deep input costs us nothing but stack);
//! * integers outside the `i64` range are an error (json-c saturates);
//! * `NaN`/`Infinity` are not accepted;
//! * a key written without a value (`"suspend",`, the input form of the old
//!   workgen) is rejected unless [`Options::allow_bare_keys`] is set, in
//!   which case it becomes a [`Kind::Bare`] member and the caller decides.

use std::fmt;

/// Deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 128;

/// A position in the text: 1-based line and column (in characters).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Pos {
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1, counted in characters.
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A JSON value and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    /// Position of the value's first character.
    pub pos: Pos,
    /// The value itself.
    pub kind: Kind,
}

/// The kinds of JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// `null` (any case).
    Null,
    /// `true` / `false` (any case).
    Bool(bool),
    /// A number literal without `.`, `e` or `E`.
    Int(i64),
    /// Any other number literal.
    Double(f64),
    /// A string (double or single quoted), escapes resolved.
    Str(String),
    /// An array.
    Array(Vec<Value>),
    /// An object: every member in text order, repeated keys kept.
    Object(Vec<Member>),
    /// No value: a key written without `: value` (only with
    /// [`Options::allow_bare_keys`]).
    Bare,
}

impl Kind {
    /// Short name of the JSON type, for messages ("an int", "a string", ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool(_) => "a boolean",
            Kind::Int(_) => "an int",
            Kind::Double(_) => "a double",
            Kind::Str(_) => "a string",
            Kind::Array(_) => "an array",
            Kind::Object(_) => "an object",
            Kind::Bare => "nothing",
        }
    }
}

/// One member of an object.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// The key, escapes resolved.
    pub key: String,
    /// Position of the key's opening quote.
    pub key_pos: Pos,
    /// The value.
    pub value: Value,
}

/// Reader options.
#[derive(Copy, Clone, Debug, Default)]
pub struct Options {
    /// Accept `"key",` / `"key" }` inside objects as a [`Kind::Bare`] member.
    pub allow_bare_keys: bool,
}

/// A syntax error: where, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Where the problem was found.
    pub pos: Pos,
    /// What was expected or what is wrong, one line.
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.pos, self.msg)
    }
}

impl std::error::Error for ParseError {}

/// Parses a whole document with default options (json-c behaviour).
pub fn parse(text: &str) -> Result<Value, ParseError> {
    parse_with(text, Options::default())
}

/// Parses a whole document.
pub fn parse_with(text: &str, opts: Options) -> Result<Value, ParseError> {
    let mut p = Parser {
        chars: text.chars().collect(),
        i: 0,
        line: 1,
        col: 1,
        depth: 0,
        opts,
    };
    p.skip_ws()?;
    if p.peek().is_none() {
        return Err(p.err("expected a JSON value, found end of file (the file is empty)"));
    }
    let v = p.value()?;
    p.skip_ws()?;
    if let Some(c) = p.peek() {
        return Err(p.err(&format!(
            "expected end of file after the document, found {}",
            describe(c)
        )));
    }
    Ok(v)
}

fn describe(c: char) -> String {
    match c {
        '\n' => "a line break".into(),
        c if c.is_control() => format!("control character U+{:04X}", c as u32),
        c => format!("'{c}'"),
    }
}

struct Parser {
    chars: Vec<char>,
    i: usize,
    line: u32,
    col: u32,
    depth: usize,
    opts: Options,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn err(&self, msg: &str) -> ParseError {
        self.err_at(self.pos(), msg)
    }

    fn err_at(&self, pos: Pos, msg: &str) -> ParseError {
        ParseError {
            pos,
            msg: msg.to_string(),
        }
    }

    fn found(&self) -> String {
        match self.peek() {
            None => "end of file".into(),
            Some(c) => describe(c),
        }
    }

    /// Skips whitespace and comments.
    fn skip_ws(&mut self) -> Result<(), ParseError> {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('/') => {
                    let start = self.pos();
                    match self.chars.get(self.i + 1) {
                        Some('/') => {
                            while let Some(c) = self.bump() {
                                if c == '\n' {
                                    break;
                                }
                            }
                        }
                        Some('*') => {
                            self.bump();
                            self.bump();
                            loop {
                                match self.bump() {
                                    None => return Err(self.err_at(
                                        start,
                                        "unterminated /* comment (expected */ before end of file)",
                                    )),
                                    Some('*') if self.peek() == Some('/') => {
                                        self.bump();
                                        break;
                                    }
                                    Some(_) => {}
                                }
                            }
                        }
                        _ => return Err(self.err("expected a comment after '/'")),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self) -> Result<Value, ParseError> {
        let pos = self.pos();
        let kind = match self.peek() {
            Some('{') => self.nested(pos, Self::object)?,
            Some('[') => self.nested(pos, Self::array)?,
            Some('"') | Some('\'') => Kind::Str(self.string()?),
            Some(c) if c == '-' || c.is_ascii_digit() => self.number()?,
            Some(c) if c.is_ascii_alphabetic() => self.word()?,
            _ => return Err(self.err(&format!("expected a value, found {}", self.found()))),
        };
        Ok(Value { pos, kind })
    }

    fn nested(
        &mut self,
        pos: Pos,
        f: fn(&mut Self) -> Result<Kind, ParseError>,
    ) -> Result<Kind, ParseError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err_at(
                pos,
                &format!("nesting deeper than {MAX_DEPTH} levels of objects and arrays"),
            ));
        }
        self.depth += 1;
        let k = f(self)?;
        self.depth -= 1;
        Ok(k)
    }

    fn word(&mut self) -> Result<Kind, ParseError> {
        let pos = self.pos();
        let mut w = String::new();
        while let Some(c) = self
            .peek()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            w.push(c);
            self.bump();
        }
        match w.to_ascii_lowercase().as_str() {
            "true" => Ok(Kind::Bool(true)),
            "false" => Ok(Kind::Bool(false)),
            "null" => Ok(Kind::Null),
            _ => Err(self.err_at(
                pos,
                &format!("expected a value, found '{w}' (strings need quotes)"),
            )),
        }
    }

    fn number(&mut self) -> Result<Kind, ParseError> {
        let pos = self.pos();
        let mut s = String::new();
        while let Some(c) = self
            .peek()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.'))
        {
            s.push(c);
            self.bump();
        }
        let is_double = s.contains(['.', 'e', 'E']);
        let digits = s.strip_prefix('-').unwrap_or(&s);
        let well_formed = if is_double {
            valid_double(digits)
        } else {
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        };
        if !well_formed {
            return Err(self.err_at(pos, &format!("bad number '{s}'")));
        }
        if is_double {
            s.parse::<f64>()
                .map(Kind::Double)
                .map_err(|_| self.err_at(pos, &format!("bad number '{s}'")))
        } else {
            s.parse::<i64>()
                .map(Kind::Int)
                .map_err(|_| self.err_at(pos, &format!("integer '{s}' is out of range")))
        }
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.pos();
        let quote = self.bump().expect("caller checked the quote");
        let mut out = String::new();
        loop {
            match self.bump() {
                None => {
                    return Err(self.err_at(
                        start,
                        &format!(
                            "unterminated string (expected closing {quote} before end of file)"
                        ),
                    ))
                }
                Some(c) if c == quote => return Ok(out),
                Some('\\') => {
                    let epos = self.pos();
                    let c = self.bump();
                    match c {
                        Some('"') => out.push('"'),
                        Some('\'') => out.push('\''),
                        Some('\\') => out.push('\\'),
                        Some('/') => out.push('/'),
                        Some('b') => out.push('\u{8}'),
                        Some('f') => out.push('\u{c}'),
                        Some('n') => out.push('\n'),
                        Some('r') => out.push('\r'),
                        Some('t') => out.push('\t'),
                        Some('u') => out.push(self.unicode_escape(epos)?),
                        _ => return Err(self.err_at(epos, "bad escape in string")),
                    }
                }
                Some(c) => out.push(c),
            }
        }
    }

    fn hex4(&mut self, epos: Pos) -> Result<u32, ParseError> {
        let mut v = 0;
        for _ in 0..4 {
            let d = self
                .bump()
                .and_then(|c| c.to_digit(16))
                .ok_or_else(|| self.err_at(epos, "bad \\u escape (expected 4 hex digits)"))?;
            v = v * 16 + d;
        }
        Ok(v)
    }

    fn unicode_escape(&mut self, epos: Pos) -> Result<char, ParseError> {
        let hi = self.hex4(epos)?;
        let cp = if (0xD800..0xDC00).contains(&hi) {
            if self.bump() != Some('\\') || self.bump() != Some('u') {
                return Err(self.err_at(epos, "bad \\u escape (unpaired surrogate)"));
            }
            let lo = self.hex4(epos)?;
            if !(0xDC00..0xE000).contains(&lo) {
                return Err(self.err_at(epos, "bad \\u escape (unpaired surrogate)"));
            }
            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
        } else {
            hi
        };
        char::from_u32(cp).ok_or_else(|| self.err_at(epos, "bad \\u escape"))
    }

    fn array(&mut self) -> Result<Kind, ParseError> {
        self.bump();
        let mut items = Vec::new();
        loop {
            self.skip_ws()?;
            if self.peek() == Some(']') {
                self.bump();
                return Ok(Kind::Array(items));
            }
            items.push(self.value()?);
            self.skip_ws()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some(']') => {}
                _ => {
                    return Err(self.err(&format!(
                        "expected ',' or ']' in array, found {}",
                        self.found()
                    )))
                }
            }
        }
    }

    fn object(&mut self) -> Result<Kind, ParseError> {
        self.bump();
        let mut members = Vec::new();
        loop {
            self.skip_ws()?;
            match self.peek() {
                Some('}') => {
                    self.bump();
                    return Ok(Kind::Object(members));
                }
                Some('"') | Some('\'') => {}
                _ => {
                    return Err(self.err(&format!(
                        "expected a quoted key or '}}', found {}",
                        self.found()
                    )))
                }
            }
            let key_pos = self.pos();
            let key = self.string()?;
            self.skip_ws()?;
            let value = match self.peek() {
                Some(':') => {
                    self.bump();
                    self.skip_ws()?;
                    self.value()?
                }
                Some(',') | Some('}') if self.opts.allow_bare_keys => Value {
                    pos: key_pos,
                    kind: Kind::Bare,
                },
                _ => {
                    return Err(self.err(&format!(
                        "expected ':' after key \"{}\", found {}",
                        key.escape_default(),
                        self.found()
                    )))
                }
            };
            members.push(Member {
                key,
                key_pos,
                value,
            });
            self.skip_ws()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some('}') => {}
                _ => {
                    return Err(self.err(&format!(
                        "expected ',' or '}}' in object, found {}",
                        self.found()
                    )))
                }
            }
        }
    }
}

/// Checks the shape `digits [. digits] [(e|E) [+|-] digits]` (sign removed).
fn valid_double(s: &str) -> bool {
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut parts = mant.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next();
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let mant_ok = !int.is_empty()
        && all_digits(int)
        && frac.into_iter().all(|f| !f.is_empty() && all_digits(f));
    let exp_ok = exp.into_iter().all(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && all_digits(e)
    });
    mant_ok && exp_ok
}
