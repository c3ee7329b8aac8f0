//! The errors of the command-line layer (argument resolution, a run, the
//! in-process command line): a user error is one line, printed as it is;
//! any other error is printed with its chain of causes, on one line too.

/// A user error: printed as one line, exit status 2.
#[derive(Debug)]
pub struct UserError(pub String);
impl std::fmt::Display for UserError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UserError {}

/// Shorthand for a user error.
pub fn user(msg: impl Into<String>) -> anyhow::Error {
    UserError(msg.into()).into()
}

/// An error as its one line: user errors as they are, anything else with
/// its chain.
pub fn one_line(e: &anyhow::Error) -> String {
    let msg = if e.downcast_ref::<UserError>().is_some() {
        e.to_string()
    } else {
        format!("{e:#}")
    };
    msg.replace('\n', " ")
}
