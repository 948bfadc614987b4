//! Layouts as trees: which components run side by side on disjoint PEs and which run one after
//! the other on the same PEs.
//!
//! Models driven by CIME (CESM, E3SM, NorESM) run every component in one executable. Components
//! placed on the same PEs take turns; components on disjoint PEs can run at the same time. A
//! layout is written as an expression: `a | b` runs `a` and `b` side by side on disjoint PEs,
//! `a ; b` runs them one after the other on the same PEs, and parentheses group. CESM's usual
//! layout is `ocn | (atm ; (ice | lnd))`; an OASIS-coupled model such as EC-Earth is `ifs | nemo`.
//!
//! The tree gives the layout model ([`Layout::run_time`]): the time of `a | b` is the larger of
//! the two, the time of `a ; b` their sum. [`infer`] reads the tree back from the PE ranges a
//! CIME run states, and [`cores`] counts the cores a set of ranges takes the way CIME bills them.
//! A parse error names the column and how to write the expression instead. [`search::fastest`]
//! finds the fastest placement of a tree within a budget, exactly, and [`search::front_threaded`]
//! the speed/cores front with threads per component; [`ranked::rank`] ranks every placement by
//! fittingness, exactly.

mod choice;
pub mod emit;
mod infer;
pub mod place;
pub mod ranked;
pub mod search;

use std::fmt;

pub use infer::{cores, infer, per_pe_time, PeRange};

/// A layout tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// One component, by name.
    Component(String),
    /// Parts side by side on disjoint PEs (`a | b`): at least two.
    Beside(Vec<Layout>),
    /// Parts one after the other on the same PEs (`a ; b`): at least two.
    After(Vec<Layout>),
}

/// Why a layout expression could not be read: the column (1-based, in characters) and what to
/// write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("layout {expr:?}: column {column}: {message}")]
pub struct LayoutError {
    /// The expression as given.
    pub expr: String,
    /// 1-based character column of the problem.
    pub column: usize,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// The longest layout expression read, in characters: far more than any model's components.
pub const MAX_EXPR_CHARS: usize = 4096;

/// How deep parentheses may nest: a bound so that no input can exhaust the stack.
pub const MAX_DEPTH: usize = 64;

impl Layout {
    /// Parses a layout expression (see the module docs). Names are letters, digits, `_`, `-`
    /// and `.`; `|` and `;` may not be mixed at one level without parentheses, and a name may
    /// appear once.
    pub fn parse(expr: &str) -> Result<Layout, LayoutError> {
        let chars: Vec<char> = expr.chars().collect();
        let error = |column: usize, message: String| LayoutError {
            expr: expr.to_string(),
            column,
            message,
        };
        if chars.len() > MAX_EXPR_CHARS {
            return Err(error(
                MAX_EXPR_CHARS + 1,
                format!("the expression is longer than {MAX_EXPR_CHARS} characters; name fewer components"),
            ));
        }
        let mut parser = Parser {
            chars: &chars,
            at: 0,
            depth: 0,
        };
        let layout = parser.expression().map_err(|(c, m)| error(c, m))?;
        parser.skip_space();
        if parser.at < chars.len() {
            let found = chars[parser.at];
            let message = if found == ')' {
                "a ')' without its '('; remove it or add the '(' it closes".to_string()
            } else {
                format!("{found:?} after a complete layout; join parts with '|' (side by side) or ';' (one after the other)")
            };
            return Err(error(parser.at + 1, message));
        }
        let mut seen = Vec::new();
        for name in layout.components() {
            if seen.contains(&name) {
                let column = find_second(&chars, name).unwrap_or(1);
                return Err(error(
                    column,
                    format!("{name} appears twice; a component runs in one place of the layout"),
                ));
            }
            seen.push(name);
        }
        Ok(layout)
    }

    /// The component names, left to right.
    pub fn components(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    /// The PEs the tree spans with `tasks(name)` tasks per component (none counts 0): parts
    /// side by side add up, parts one after the other take the widest.
    pub fn width(&self, tasks: &dyn Fn(&str) -> Option<u32>) -> u32 {
        match self {
            Layout::Component(name) => tasks(name).unwrap_or(0),
            Layout::Beside(parts) => parts.iter().map(|p| p.width(tasks)).sum(),
            Layout::After(parts) => parts.iter().map(|p| p.width(tasks)).max().unwrap_or(0),
        }
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Layout::Component(name) => out.push(name),
            Layout::Beside(parts) | Layout::After(parts) => {
                parts.iter().for_each(|p| p.collect(out));
            }
        }
    }

    /// The layout model's time for the tree: a component's own time, the largest of parts side
    /// by side, the sum of parts one after the other. `time` gives each component's time;
    /// `Err(name)` names the first component it has none for.
    pub fn run_time(&self, time: &dyn Fn(&str) -> Option<f64>) -> Result<f64, String> {
        match self {
            Layout::Component(name) => time(name).ok_or_else(|| name.clone()),
            Layout::Beside(parts) => parts
                .iter()
                .try_fold(0.0_f64, |worst, p| Ok(worst.max(p.run_time(time)?))),
            Layout::After(parts) => parts
                .iter()
                .try_fold(0.0_f64, |sum, p| Ok(sum + p.run_time(time)?)),
        }
    }

    /// Joins parts side by side, flattening nested `|` (a single part is itself).
    pub fn beside(parts: Vec<Layout>) -> Layout {
        Layout::join(parts, true)
    }

    /// Joins parts one after the other, flattening nested `;` (a single part is itself).
    pub fn after(parts: Vec<Layout>) -> Layout {
        Layout::join(parts, false)
    }

    fn join(parts: Vec<Layout>, beside: bool) -> Layout {
        let mut flat = Vec::new();
        for part in parts {
            match part {
                Layout::Beside(inner) if beside => flat.extend(inner),
                Layout::After(inner) if !beside => flat.extend(inner),
                other => flat.push(other),
            }
        }
        match flat.len() {
            1 => flat.pop().expect("one part"),
            _ if beside => Layout::Beside(flat),
            _ => Layout::After(flat),
        }
    }
}

/// The column (1-based) of the second whole-word occurrence of `name`.
fn find_second(chars: &[char], name: &str) -> Option<usize> {
    let word: Vec<char> = name.chars().collect();
    let mut found = 0;
    let mut i = 0;
    while i + word.len() <= chars.len() {
        let before_ok = i == 0 || !is_name_char(chars[i - 1]);
        let after_ok = chars.get(i + word.len()).is_none_or(|c| !is_name_char(*c));
        if before_ok && after_ok && chars[i..i + word.len()] == word[..] {
            found += 1;
            if found == 2 {
                return Some(i + 1);
            }
        }
        i += 1;
    }
    None
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.')
}

impl fmt::Display for Layout {
    /// The expression with the fewest parentheses that reads back as the same tree.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (parts, op) = match self {
            Layout::Component(name) => return f.write_str(name),
            Layout::Beside(parts) => (parts, " | "),
            Layout::After(parts) => (parts, " ; "),
        };
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                f.write_str(op)?;
            }
            match part {
                Layout::Component(_) => write!(f, "{part}")?,
                _ => write!(f, "({part})")?,
            }
        }
        Ok(())
    }
}

impl std::str::FromStr for Layout {
    type Err = LayoutError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Layout::parse(s)
    }
}

/// A recursive-descent reader of the expression; errors are (1-based column, message).
struct Parser<'a> {
    chars: &'a [char],
    at: usize,
    depth: usize,
}

type ParseResult = Result<Layout, (usize, String)>;

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.chars.get(self.at).is_some_and(|c| c.is_whitespace()) {
            self.at += 1;
        }
    }

    /// expression := part (op part)*, with one operator throughout.
    fn expression(&mut self) -> ParseResult {
        let mut parts = vec![self.part()?];
        let mut op: Option<(char, usize)> = None;
        loop {
            self.skip_space();
            let Some(&c) = self.chars.get(self.at) else {
                break;
            };
            if c != '|' && c != ';' {
                break;
            }
            if let Some((first, _)) = op.filter(|(first, _)| *first != c) {
                return Err((
                    self.at + 1,
                    format!(
                        "'{c}' after '{first}' at the same level; add parentheses, as in (a {first} b) {c} c or a {first} (b {c} c)"
                    ),
                ));
            }
            op = Some((c, self.at));
            self.at += 1;
            parts.push(self.part()?);
        }
        Ok(match op {
            None => parts.pop().expect("one part"),
            Some(('|', _)) => Layout::beside(parts),
            Some(_) => Layout::after(parts),
        })
    }

    /// part := NAME | '(' expression ')'
    fn part(&mut self) -> ParseResult {
        self.skip_space();
        let start = self.at;
        match self.chars.get(self.at) {
            None => Err((
                start + 1,
                "the expression ends where a component name or '(' should be; complete it, as in ocn | (atm ; (ice | lnd))".into(),
            )),
            Some('(') => {
                if self.depth >= MAX_DEPTH {
                    return Err((start + 1, format!("parentheses nest deeper than {MAX_DEPTH}; remove some")));
                }
                self.depth += 1;
                self.at += 1;
                let inner = self.expression()?;
                self.skip_space();
                if self.chars.get(self.at) != Some(&')') {
                    return Err((
                        self.at + 1,
                        format!("the '(' at column {} is not closed; add ')'", start + 1),
                    ));
                }
                self.at += 1;
                self.depth -= 1;
                Ok(inner)
            }
            Some(&c) if is_name_char(c) => {
                while self.chars.get(self.at).is_some_and(|c| is_name_char(*c)) {
                    self.at += 1;
                }
                Ok(Layout::Component(self.chars[start..self.at].iter().collect()))
            }
            Some(&c) => Err((
                start + 1,
                format!(
                    "{c:?} where a component name or '(' should be; names are letters, digits, '_', '-' and '.', joined by '|' or ';'"
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(name: &str) -> Layout {
        Layout::Component(name.into())
    }

    #[test]
    fn cesm_default_reads_as_its_tree_and_prints_back() {
        let l = Layout::parse("ocn | (atm ; (ice | lnd))").unwrap();
        assert_eq!(
            l,
            Layout::Beside(vec![
                c("ocn"),
                Layout::After(vec![c("atm"), Layout::Beside(vec![c("ice"), c("lnd")])])
            ])
        );
        assert_eq!(l.to_string(), "ocn | (atm ; (ice | lnd))");
        assert_eq!(Layout::parse("ifs|nemo").unwrap().to_string(), "ifs | nemo");
        assert_eq!(
            Layout::parse(" ((atm ; lnd) ; ice) ; ocn ")
                .unwrap()
                .to_string(),
            "atm ; lnd ; ice ; ocn"
        );
        assert_eq!(Layout::parse("(atm)").unwrap(), c("atm"));
    }

    #[test]
    fn run_time_is_max_beside_and_sum_after() {
        let l = Layout::parse("ocn | (atm ; (ice | lnd))").unwrap();
        let times = |n: &str| match n {
            "ocn" => Some(100.0),
            "atm" => Some(70.0),
            "ice" => Some(20.0),
            "lnd" => Some(35.0),
            _ => None,
        };
        assert_eq!(l.run_time(&times), Ok(105.0));
        let l = Layout::parse("ocn | (atm ; wav)").unwrap();
        assert_eq!(l.run_time(&times), Err("wav".to_string()));
    }

    #[test]
    fn errors_name_the_column_and_the_fix() {
        let cases = [
            ("a | b ; c", 7, "add parentheses"),
            ("a | (b ; c", 11, "not closed"),
            ("a | b)", 6, "without its '('"),
            ("a |", 4, "ends where"),
            ("a b", 3, "join parts"),
            ("a | $", 5, "names are letters"),
            ("atm ; (ocn | atm)", 14, "appears twice"),
            ("", 1, "ends where"),
        ];
        for (expr, column, words) in cases {
            let e = Layout::parse(expr).unwrap_err();
            assert_eq!(e.column, column, "{expr}: {e}");
            assert!(e.to_string().contains(words), "{expr}: {e}");
            assert!(!e.to_string().contains('\n'));
        }
        let deep = format!("{}a{}", "(".repeat(100), ")".repeat(100));
        assert!(Layout::parse(&deep)
            .unwrap_err()
            .message
            .contains("nest deeper"));
    }
}
