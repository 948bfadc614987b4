//! One way to write a configuration as text, `IFS 408 + NEMO 240`, so the terminal app, the
//! report, the CLI and the campaign's notes name a configuration alike and cannot drift apart.

use std::fmt;

/// A configuration's PEs per component as text: each component's name and PEs, joined by
/// `" + "` (`IFS 408 + NEMO 240`), or by `" / "` with [`ConfigurationText::slashed`].
///
/// Names and PEs pair up in order; with more of one than the other the extra ones are left
/// out, as a `zip` would.
#[derive(Debug, Clone, Copy)]
pub struct ConfigurationText<'a> {
    parts: Parts<'a>,
    separator: &'static str,
}

/// Where the names and PEs come from: two parallel slices, or one slice of pairs.
#[derive(Debug, Clone, Copy)]
enum Parts<'a> {
    Split {
        names: &'a [String],
        nproc: &'a [u32],
    },
    Paired(&'a [(String, u32)]),
}

impl<'a> ConfigurationText<'a> {
    /// `names[k] nproc[k]` for each component, joined by `" + "`.
    pub fn new(names: &'a [String], nproc: &'a [u32]) -> Self {
        ConfigurationText {
            parts: Parts::Split { names, nproc },
            separator: " + ",
        }
    }

    /// The same text from `(name, PEs)` pairs, as campaign plans and run events hold them.
    pub fn pairs(pairs: &'a [(String, u32)]) -> Self {
        ConfigurationText {
            parts: Parts::Paired(pairs),
            separator: " + ",
        }
    }

    /// Joined by `" / "` instead: the campaign's plan, progress lines and the tuning notes
    /// write a configuration so, and their logs and documented examples show that text.
    pub fn slashed(self) -> Self {
        ConfigurationText {
            separator: " / ",
            ..self
        }
    }
}

impl fmt::Display for ConfigurationText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut write = |k: usize, name: &str, p: u32| {
            if k > 0 {
                f.write_str(self.separator)?;
            }
            write!(f, "{name} {p}")
        };
        match self.parts {
            Parts::Split { names, nproc } => {
                for (k, (name, &p)) in names.iter().zip(nproc).enumerate() {
                    write(k, name, p)?;
                }
            }
            Parts::Paired(pairs) => {
                for (k, (name, p)) in pairs.iter().enumerate() {
                    write(k, name, *p)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["IFS".into(), "NEMO".into()]
    }

    #[test]
    fn names_each_component_with_its_pes() {
        let names = names();
        assert_eq!(
            ConfigurationText::new(&names, &[408, 240]).to_string(),
            "IFS 408 + NEMO 240"
        );
        assert_eq!(
            ConfigurationText::new(&names, &[408, 240])
                .slashed()
                .to_string(),
            "IFS 408 / NEMO 240"
        );
    }

    #[test]
    fn pairs_read_as_the_split_form() {
        let pairs = vec![("IFS".to_string(), 408), ("NEMO".to_string(), 240)];
        assert_eq!(
            ConfigurationText::pairs(&pairs).to_string(),
            ConfigurationText::new(&names(), &[408, 240]).to_string()
        );
        assert_eq!(
            ConfigurationText::pairs(&pairs).slashed().to_string(),
            "IFS 408 / NEMO 240"
        );
    }

    #[test]
    fn one_component_has_no_separator_and_extra_names_are_left_out() {
        let names = vec!["IFS".to_string(), "NEMO".to_string(), "LPJG".to_string()];
        assert_eq!(
            ConfigurationText::new(&names[..1], &[408]).to_string(),
            "IFS 408"
        );
        assert_eq!(
            ConfigurationText::new(&names, &[408, 240]).to_string(),
            "IFS 408 + NEMO 240"
        );
        assert_eq!(ConfigurationText::pairs(&[]).to_string(), "");
    }
}
