//! How a measuring child process reports to its parent: one line on stdout, a tag naming the
//! kind of result, then the result as a JSON object (serde): fields are named, so a field the
//! child adds that the parent does not know is a parse error rather than a silently shifted
//! column (a field the parent expects as optional may be missing).

use serde::de::DeserializeOwned;
use serde::Serialize;

/// `value` as the child's result line under `tag`.
///
/// # Panics
///
/// Never for the result types the children print (plain numbers and lists; a value that cannot
/// be encoded is a defect of this tool).
pub fn write<T: Serialize>(tag: &str, value: &T) -> String {
    let json = serde_json::to_string(value).expect("a child's result encodes as JSON");
    format!("{tag} {json}")
}

/// The result on `line`, which must be a `tag` line.
///
/// # Errors
///
/// A message saying what is wrong: another tag, or JSON that is not the expected object.
pub fn read<T: DeserializeOwned>(tag: &str, line: &str) -> Result<T, String> {
    let json = line
        .strip_prefix(tag)
        .and_then(|rest| rest.strip_prefix(' '))
        .ok_or_else(|| format!("not a {tag} line: {line:?}"))?;
    serde_json::from_str(json).map_err(|e| format!("malformed {tag} line ({e}): {line:?}"))
}
