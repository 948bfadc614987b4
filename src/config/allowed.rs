//! Allowed-PE lists: the core counts a component can run on (NEMO's land-domain elimination),
//! inline in the campaign file or read from a file, including NEMO's own `ln_listonly` output.

use std::path::Path;

use super::ConfigError;

/// Reads an allowed-PE list file: whole numbers separated by whitespace or commas, `#` comments;
/// or NEMO's output with `ln_listonly = .true.` (see [`parse_allowed`]).
pub fn load_allowed(path: &Path) -> Result<Vec<u32>, ConfigError> {
    let file = path.display().to_string();
    let text = crate::fsutil::read_small_text(path).map_err(|e| ConfigError::Unreadable {
        file: file.clone(),
        reason: e.to_string(),
    })?;
    parse_allowed(&text, &file)
}

/// Parses an allowed-PE list (see [`load_allowed`]); an empty list is an error.
///
/// A text with `nb_cores oce: N, land domains excluded: ...` lines is the `ocean.output` NEMO
/// writes with `ln_listonly = .true.`: the core counts it lists are the list, and every other
/// line of that output is skipped, so the file can be given as NEMO wrote it.
pub fn parse_allowed(text: &str, file: &str) -> Result<Vec<u32>, ConfigError> {
    if text.contains(NEMO_LISTONLY_LABEL) {
        return parse_nemo_listonly(text, file);
    }
    let mut values = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let content = line.split('#').next().unwrap_or("");
        for token in content
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
        {
            match token.parse::<u32>() {
                Ok(v) if v > 0 => values.push(v),
                _ => {
                    return Err(ConfigError::BadAllowed {
                        file: file.to_string(),
                        line: i + 1,
                        value: token.to_string(),
                    })
                }
            }
        }
    }
    if values.is_empty() {
        return Err(ConfigError::Semantics {
            file: file.to_string(),
            message: "the allowed list is empty; list the PE counts the component can run on"
                .into(),
        });
    }
    Ok(values)
}

/// The label of a core count in NEMO's `ln_listonly` output.
const NEMO_LISTONLY_LABEL: &str = "nb_cores oce:";

/// The core counts of NEMO's `ln_listonly` output (see [`parse_allowed`]).
fn parse_nemo_listonly(text: &str, file: &str) -> Result<Vec<u32>, ConfigError> {
    let mut values = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some((_, rest)) = line.split_once(NEMO_LISTONLY_LABEL) else {
            continue;
        };
        let token = rest
            .split(|c: char| c.is_whitespace() || c == ',')
            .find(|t| !t.is_empty())
            .unwrap_or("");
        match token.parse::<u32>() {
            Ok(v) if v > 0 => {
                if !values.contains(&v) {
                    values.push(v);
                }
            }
            _ => {
                return Err(ConfigError::BadAllowed {
                    file: file.to_string(),
                    line: i + 1,
                    value: token.to_string(),
                })
            }
        }
    }
    values.sort_unstable();
    Ok(values)
}
