//! toml's and serde's messages in the words of someone who writes the campaign file: one line
//! with the line number and an excerpt, keys and numbers rather than fields and `u32`, and the
//! nearest valid key when a name is misspelt.

/// toml's errors are multi-line with a source excerpt; keep the first line and the position,
/// in the words of the file (keys, numbers) rather than serde's (fields, u32).
pub(super) fn one_line_toml_error(e: &toml::de::Error, text: &str) -> String {
    let message = plain_words(&e.message().trim().replace('\n', " "));
    match e.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            let excerpt = text.lines().nth(line - 1).unwrap_or("").trim();
            format!("line {line}: {message} (at `{excerpt}`)")
        }
        None => message,
    }
}

/// serde's message about a value or a key, for someone who writes TOML: "unknown field `x`,
/// expected one of ..." becomes "unknown key `x`; did you mean `y`? (valid here: ...)", and type
/// names become what to write ("expected u32" -> "expected a whole number >= 0").
fn plain_words(message: &str) -> String {
    if let Some(unknown) = unknown_name(message) {
        return unknown;
    }
    const WORDS: [(&str, &str); 8] = [
        ("expected u8", "expected a whole number >= 0"),
        ("expected u16", "expected a whole number >= 0"),
        ("expected u32", "expected a whole number >= 0"),
        ("expected u64", "expected a whole number >= 0"),
        ("expected f32", "expected a number"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
        ("expected a sequence", "expected a list ([...])"),
    ];
    let mut out = message.replace("floating point `", "decimal number `");
    for (jargon, plain) in WORDS {
        out = out.replace(jargon, plain);
    }
    out
}

/// "unknown field `repetitons`, expected one of `a`, `b`" (or a variant) with the nearest valid
/// name, when one is near enough to be the one meant.
fn unknown_name(message: &str) -> Option<String> {
    let (what, rest) = [("unknown field `", "key"), ("unknown variant `", "value")]
        .iter()
        .find_map(|(prefix, what)| message.strip_prefix(prefix).map(|r| (*what, r)))?;
    let (given, rest) = rest.split_once('`')?;
    let (_, expected) = rest.split_once("expected")?;
    // The names are the back-quoted pieces: `a`, `b` or `c`.
    let valid: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let nearest = valid
        .iter()
        .map(|v| (strsim::jaro_winkler(given, v), *v))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, v)| format!("; did you mean `{v}`?"))
        .unwrap_or_default();
    let list: Vec<String> = valid.iter().map(|v| format!("`{v}`")).collect();
    Some(format!(
        "unknown {what} `{given}`{nearest} (valid here: {})",
        list.join(", ")
    ))
}
