//! The recording's small JSON files (`costs.json`, `c2c.json`): one
//! object whose keys are all known, so a typo cannot silently leave a
//! guess in place. Errors are one line naming the file (and the line, for
//! a syntax error).

use serde_json::{Map, Value};
use std::path::Path;

/// Parses `text` (the contents of `path`) as one JSON object with no key
/// outside `known`.
pub fn object(path: &Path, text: &str, known: &[&[&str]]) -> Result<Map<String, Value>, String> {
    let at = path.display();
    let v: Value = serde_json::from_str(text).map_err(|e| format!("{at}:{}: {e}", e.line()))?;
    let Value::Object(obj) = v else {
        return Err(format!("{at}: expected a JSON object"));
    };
    if let Some(k) = obj
        .keys()
        .find(|k| !known.iter().any(|set| set.contains(&k.as_str())))
    {
        return Err(format!("{at}: unknown key '{k}'"));
    }
    Ok(obj)
}
