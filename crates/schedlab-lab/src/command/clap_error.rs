//! clap's argument errors in the CLI's own form: one `schedlab: error:`
//! line with the hint folded in after `; ` (clap's tip, or the usage),
//! exit status 2; `--help` and `--version` print as clap prints them
//! (exit 0).

use std::process::ExitCode;

/// clap's verdict on the arguments: `--help` and `--version` print as clap
/// prints them (exit 0); an argument error becomes our one error line,
/// the hint (clap's tip, or the usage) folded in, exit status 2.
pub fn report(e: clap::Error, cmd: &clap::Command) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    eprintln!(
        "schedlab: error: {}",
        one_line(e.kind(), &e.render().to_string(), cmd)
    );
    ExitCode::from(2)
}

/// clap's rendered error `text` as one line: the message, `; `, the hint.
pub fn one_line(kind: clap::error::ErrorKind, text: &str, cmd: &clap::Command) -> String {
    let (msg, hint) = lines(kind, text, cmd);
    format!("{msg}; {hint}")
}

/// The error line and the hint line of clap's rendered error `text`.
fn lines(kind: clap::error::ErrorKind, text: &str, cmd: &clap::Command) -> (String, String) {
    use clap::error::ErrorKind;
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    // The message is clap's first paragraph (a missing-argument error
    // lists the arguments on the following lines), joined into one line.
    let first: Vec<&str> = lines
        .iter()
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .copied()
        .collect();
    let msg = first.join(" ");
    let msg = msg.strip_prefix("error: ").unwrap_or(&msg).to_string();
    let msg = if msg.is_empty() {
        "bad arguments".to_string()
    } else {
        msg
    };
    let msg = match kind {
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            "no command given".to_string()
        }
        _ => msg,
    };
    let usage = lines
        .iter()
        .find_map(|l| l.strip_prefix("Usage: "))
        .map(|u| u.split_whitespace().collect::<Vec<_>>().join(" "));
    let hint = if let Some(tip) = lines.iter().find_map(|l| l.strip_prefix("tip: ")) {
        tip.to_string()
    } else if let Some(u) = usage {
        let cmd = u
            .split_whitespace()
            .take_while(|w| !w.starts_with(['[', '<', '-']))
            .collect::<Vec<_>>()
            .join(" ");
        format!("usage: {u} (more: {cmd} --help)")
    } else {
        format!("see {} --help", command_named_in_args(cmd))
    };
    (msg, hint)
}

/// `schedlab` or `schedlab SUBCOMMAND`, as given on the command line.
fn command_named_in_args(cmd: &clap::Command) -> String {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    match std::env::args().skip(1).find(|a| names.contains(a)) {
        Some(sub) => format!("schedlab {sub}"),
        None => "schedlab".to_string(),
    }
}
