//! Names a run's settings take in a shell: environment variables (`AUTOLB_NPROC_<NAME>`) and
//! bash array names (`<name>_nprocs`), made from component names.
//!
//! Component names may hold letters, digits, `_` and `-` ([`crate::curve::validate_component_name`]),
//! and `-` is not allowed in a shell variable name. So:
//! * environment variables: the name in upper case, every character other than a letter or a
//!   digit replaced by `_` (`IFS-atm` -> `AUTOLB_NPROC_IFS_ATM`);
//! * bash arrays: the name with every `-` replaced by `_` (case kept), and a leading `_` when it
//!   starts with a digit (`IFS-atm` -> `IFS_atm_nprocs`, `2d` -> `_2d_nprocs`).
//!
//! Two components whose names map to the same variable are refused ([`check_distinct`]).

/// The `AUTOLB_NPROC_<NAME>` variable of a component.
pub fn nproc_env_var(component: &str) -> String {
    format!("AUTOLB_NPROC_{}", env_suffix(component))
}

/// A name as an environment-variable suffix: upper case, non-alphanumerics to `_`.
pub fn env_suffix(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// A name as a bash identifier: non-alphanumerics to `_`, case kept, `_` in front of a
/// leading digit.
pub fn shell_identifier(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// Refuses components whose names map to the same environment variable or bash array name
/// (e.g. `IFS-atm` and `IFS_atm`), naming both.
pub fn check_distinct<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
    let names: Vec<&str> = names.into_iter().collect();
    for (i, a) in names.iter().enumerate() {
        for b in &names[..i] {
            if env_suffix(a) == env_suffix(b) || shell_identifier(a) == shell_identifier(b) {
                return Err(format!(
                    "components {b:?} and {a:?} map to the same shell variable ({}); rename one",
                    nproc_env_var(a)
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_valid_shell_names() {
        assert_eq!(nproc_env_var("IFS-atm"), "AUTOLB_NPROC_IFS_ATM");
        assert_eq!(nproc_env_var("nemo"), "AUTOLB_NPROC_NEMO");
        assert_eq!(shell_identifier("IFS-atm"), "IFS_atm");
        assert_eq!(shell_identifier("2d-ocean"), "_2d_ocean");
        assert_eq!(shell_identifier("NEMO"), "NEMO");
        for name in ["a-b", "9x", "_-_", "A1-b2_c3"] {
            let id = shell_identifier(name);
            assert!(id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
            assert!(!id.starts_with(|c: char| c.is_ascii_digit()), "{id}");
        }
    }

    #[test]
    fn colliding_names_are_refused() {
        assert!(check_distinct(["IFS", "NEMO", "IFS-atm"]).is_ok());
        let e = check_distinct(["IFS-atm", "NEMO", "IFS_atm"]).unwrap_err();
        assert!(e.contains("IFS-atm") && e.contains("IFS_atm"), "{e}");
        assert!(check_distinct(["ifs", "IFS"]).is_err());
        assert!(check_distinct(["1a", "_1a"]).is_err());
    }
}
