//! Job scripts: a user template with placeholders, rendered for one run, plus the optional
//! MPMD file for `srun --multi-prog` and the `sbatch` options.
//!
//! Placeholders are `{name}` or `{nproc.NAME}`, and their values are numbers, written as
//! digits, or shell text autolb generates from words it quotes itself (`{command}`,
//! `{launch}`). Text values (the run directory, the job name, paths) are never placeholders:
//! the job script starts with `export AUTOLB_...=` lines ([`with_exports`]) and expands them
//! (`"$AUTOLB_RUN_DIR"`), and a template naming one is refused
//! ([`crate::executor::env::text_placeholder_refusal`]). `${VAR}` is left alone (shell
//! syntax), `{{` writes a literal `{`, and any other `{word}` made of lower-case letters and
//! `_` is an unknown placeholder, reported with its line (a typo such as `{ntask}` would
//! otherwise reach the cluster and fail there).

use std::collections::BTreeMap;

pub use crate::executor::env::shell_quote;
use crate::executor::env::text_placeholder_refusal;

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Literal(String),
    Placeholder { name: String, line: usize },
}

/// A parsed template (a job script, or one word of a command).
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    source: String,
    segments: Vec<Segment>,
}

/// The value of one placeholder for one run.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A whole number: inserted as digits.
    Number(u64),
    /// Shell text that is already quoted word by word (e.g. `{command}`): inserted as is in a
    /// job script, refused inside a single word.
    Shell(String),
}

/// Where the rendered text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A job script: shell text values (`{command}`, `{launch}`) go in as they are.
    Shell,
    /// One word of a command line, which the caller quotes afterwards: numbers only.
    Word,
}

/// The placeholders every run defines (besides `nproc.NAME`, `threads.NAME`, `cores.NAME`).
pub const RUN_PLACEHOLDERS: &[&str] = &[
    "iteration",
    "test",
    "repetition",
    "total_nproc",
    "extra_pes",
    "ntasks",
];

impl Template {
    /// Parses template text; `source` names it in errors (a file path or a config key).
    pub fn parse(text: &str, source: &str) -> Result<Template, String> {
        let mut segments = Vec::new();
        let mut literal = String::new();
        let mut line = 1;
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            if c == '{' {
                let preceded_by_dollar = literal.ends_with('$');
                if rest.starts_with("{{") {
                    literal.push('{');
                    rest = &rest[2..];
                    continue;
                }
                if !preceded_by_dollar {
                    if let Some(name) = placeholder_at(rest) {
                        if !literal.is_empty() {
                            segments.push(Segment::Literal(std::mem::take(&mut literal)));
                        }
                        rest = &rest[name.len() + 2..];
                        segments.push(Segment::Placeholder {
                            name: name.to_string(),
                            line,
                        });
                        continue;
                    }
                }
            }
            if c == '\n' {
                line += 1;
            }
            literal.push(c);
            rest = &rest[c.len_utf8()..];
        }
        if !literal.is_empty() {
            segments.push(Segment::Literal(literal));
        }
        Ok(Template {
            source: source.to_string(),
            segments,
        })
    }

    /// Checks that every placeholder is one of `known` (or `nproc.NAME`), so that a typo is
    /// reported when the campaign starts rather than by the cluster, and that none is a text
    /// placeholder.
    pub fn check_names(&self, known: &[&str]) -> Result<(), String> {
        for (name, line) in self.placeholders() {
            if let Some(refusal) =
                text_placeholder_refusal(&format!("{}: line {line}", self.source), name)
            {
                return Err(refusal);
            }
            if ["nproc.", "threads.", "cores."]
                .iter()
                .any(|p| name.starts_with(p))
                || known.contains(&name)
            {
                continue;
            }
            return Err(format!(
                "{}: line {line}: unknown placeholder {{{name}}}; known: {}, {{nproc.NAME}}, \
                 {{threads.NAME}}, {{cores.NAME}} \
                 (write {{{{ for a literal brace)",
                self.source,
                known
                    .iter()
                    .map(|k| format!("{{{k}}}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(())
    }

    /// Placeholder names with the line they are on.
    fn placeholders(&self) -> impl Iterator<Item = (&str, usize)> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Placeholder { name, line } => Some((name.as_str(), *line)),
            Segment::Literal(_) => None,
        })
    }

    /// Whether the template uses this placeholder.
    pub fn uses(&self, placeholder: &str) -> bool {
        self.placeholders().any(|(n, _)| n == placeholder)
    }

    /// Whether the template's text mentions the shell variable `$var` (or `${var}`).
    pub fn expands(&self, var: &str) -> bool {
        self.segments.iter().any(|s| match s {
            Segment::Literal(text) => {
                text.contains(&format!("${var}")) || text.contains(&format!("${{{var}"))
            }
            Segment::Placeholder { .. } => false,
        })
    }

    /// Fills in the values. A placeholder without a value is an error naming its line.
    pub fn render(&self, values: &BTreeMap<String, Value>, mode: Mode) -> Result<String, String> {
        let mut out = String::new();
        for segment in &self.segments {
            match segment {
                Segment::Literal(text) => out.push_str(text),
                Segment::Placeholder { name, line } => {
                    let value = values.get(name).ok_or_else(|| {
                        let hint = match name.strip_prefix("nproc.") {
                            Some(component) => format!(
                                "this campaign has no component {component:?} (components: {})",
                                values
                                    .keys()
                                    .filter_map(|k| k.strip_prefix("nproc."))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                            None => "it has no value in this campaign's settings".to_string(),
                        };
                        format!("{}: line {line}: {{{name}}}: {hint}", self.source)
                    })?;
                    match (value, mode) {
                        (Value::Number(n), _) => out.push_str(&n.to_string()),
                        (Value::Shell(s), Mode::Shell) => out.push_str(s),
                        (Value::Shell(_), Mode::Word) => {
                            return Err(format!(
                                "{}: {{{name}}} cannot be used inside a single argument",
                                self.source
                            ))
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}

/// The placeholder name starting at `text` (which starts with `{`), if any:
/// `[a-z_]+` optionally followed by `.NAME` with NAME in `[A-Za-z0-9_-]`, then `}`.
fn placeholder_at(text: &str) -> Option<&str> {
    let body = &text[1..];
    let end = body.find('}')?;
    let name = &body[..end];
    let (head, tail) = match name.split_once('.') {
        Some((h, t)) => (h, Some(t)),
        None => (name, None),
    };
    let head_ok = !head.is_empty() && head.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    let tail_ok = tail.is_none_or(|t| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    });
    (head_ok && tail_ok).then_some(name)
}

/// The job script with the `export` lines put after its first lines of comments (the
/// `#!` line and the `#SBATCH` options, which sbatch reads only before the first command).
pub fn with_exports(script: &str, exports: &str) -> String {
    let mut at = 0;
    for line in script.split_inclusive('\n') {
        let text = line.trim_start();
        if !(text.is_empty() || text.starts_with('#')) {
            break;
        }
        at += line.len();
    }
    let (head, rest) = script.split_at(at);
    let newline = if head.is_empty() || head.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!("{head}{newline}# Set by autolb for this run:\n{exports}{rest}")
}

/// Quotes one word of an `srun --multi-prog` line. srun groups single-quoted text but has no
/// escape for a quote inside it, so a word with `'` or a line break is refused.
pub fn multi_prog_quote(word: &str) -> Result<String, String> {
    if word.contains(['\'', '\n', '\r']) {
        return Err(format!(
            "{word:?} cannot be written to an srun --multi-prog file (it contains a single quote \
             or a line break); rename the path or wrap the program in a script"
        ));
    }
    Ok(format!("'{word}'"))
}

/// Escapes `%` for sbatch's `--output`/`--error` file names, where `%j` and the like are
/// replaced: a run directory with a `%` in it must stay what it is.
pub fn sbatch_filename_escape(path: &str) -> String {
    path.replace('%', "%%")
}

/// One group of consecutive ranks in an MPMD launch.
#[derive(Debug, Clone, PartialEq)]
pub struct RankGroup {
    /// Component or extra name (for the comment line).
    pub name: String,
    /// Ranks (MPI tasks) of the group.
    pub ntasks: u32,
    /// Program and arguments, placeholders already filled in.
    pub command: Vec<String>,
}

/// The `srun --multi-prog` file: groups in order, on contiguous rank ranges from 0.
pub fn render_multi_prog(run_id: &str, groups: &[RankGroup]) -> Result<String, String> {
    let mut layout = Vec::new();
    let mut lines = Vec::new();
    // u64: the ranks of many large groups cannot overflow.
    let mut first = 0u64;
    for g in groups.iter().filter(|g| g.ntasks > 0) {
        let last = first + u64::from(g.ntasks) - 1;
        let ranks = if first == last {
            first.to_string()
        } else {
            format!("{first}-{last}")
        };
        if g.command.is_empty() {
            return Err(format!("{}: the MPMD program is empty", g.name));
        }
        let words = g
            .command
            .iter()
            .map(|w| multi_prog_quote(w))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{}: {e}", g.name))?;
        layout.push(format!("{} {ranks}", g.name));
        lines.push(format!("{ranks} {}", words.join(" ")));
        first = last + 1;
    }
    Ok(format!(
        "# srun --multi-prog file written by autolb for run {run_id} ({} tasks): {}\n{}\n",
        first,
        layout.join(", "),
        lines.join("\n")
    ))
}

/// One job step of [`render_launch`]: a component's (or extra's) ranks, each on `threads`
/// cores running `threads` OpenMP threads.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchStep {
    /// Component or extra name (for the comment line).
    pub name: String,
    /// MPI ranks.
    pub ranks: u32,
    /// OpenMP threads per rank, the step's `--cpus-per-task` (1: pure MPI).
    pub threads: u32,
    /// Program and arguments, placeholders already filled in.
    pub command: Vec<String>,
}

/// `{launch}`: one `srun` step per component in the background, each with its ranks,
/// `--cpus-per-task` and `OMP_NUM_THREADS` at its threads per rank, then a wait for all that
/// ends with the first failed step's status. `overlap` lets the steps share the allocation's
/// CPUs, and put more tasks than CPUs on them (`--overlap --overcommit`), for an allocation
/// capped below the run's cores (`max_ntasks`).
pub fn render_launch(steps: &[LaunchStep], overlap: bool) -> Result<String, String> {
    let mut s = String::from(
        "# One job step per component: MPI ranks, --cpus-per-task and OMP_NUM_THREADS at its threads per rank.\nautolb_pids=\"\"\n",
    );
    for step in steps.iter().filter(|st| st.ranks > 0) {
        if step.command.is_empty() {
            return Err(format!("{}: the program is empty", step.name));
        }
        let words: Vec<String> = step.command.iter().map(|w| shell_quote(w)).collect();
        let t = step.threads.max(1);
        s.push_str(&format!(
            "# {}: {} rank(s) x {t} thread(s)\nOMP_NUM_THREADS={t} srun --ntasks={} --cpus-per-task={t}{} {} &\nautolb_pids=\"$autolb_pids $!\"\n",
            step.name,
            step.ranks,
            step.ranks,
            if overlap {
                " --overlap --overcommit"
            } else {
                ""
            },
            words.join(" ")
        ));
    }
    s.push_str(
        "autolb_status=0\nfor autolb_pid in $autolb_pids; do\n  wait \"$autolb_pid\"\n  autolb_step=$?\n  [ \"$autolb_status\" -ne 0 ] || autolb_status=$autolb_step\ndone\n(exit \"$autolb_status\")",
    );
    Ok(s)
}

/// Nodes needed for `ntasks` tasks with `cores_per_node` cores each (at least 1).
pub fn nodes_for(ntasks: u32, cores_per_node: u32) -> u32 {
    ntasks.div_ceil(cores_per_node.max(1)).max(1)
}

/// Checks a Slurm time limit: `MM`, `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM` or `D-HH:MM:SS`.
pub fn validate_time_limit(limit: &str) -> Result<(), String> {
    let (days, clock) = match limit.split_once('-') {
        Some((d, c)) => (Some(d), c),
        None => (None, limit),
    };
    let numbers = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let parts: Vec<&str> = clock.split(':').collect();
    let ok = days.is_none_or(numbers) && parts.len() <= 3 && parts.iter().all(|p| numbers(p));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "time_limit {limit:?} is not a Slurm time; use minutes (\"30\"), \"HH:MM:SS\" or \
             \"D-HH:MM:SS\""
        ))
    }
}

/// The Slurm time limit for a per-run timeout in seconds: whole minutes, rounded up (Slurm's
/// limits are in minutes).
pub fn time_limit_from_seconds(timeout_s: f64) -> String {
    let minutes = (timeout_s / 60.0).ceil().max(1.0) as u64;
    minutes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> BTreeMap<String, Value> {
        let mut v = BTreeMap::new();
        v.insert("ntasks".into(), Value::Number(648));
        v.insert("nproc.IFS".into(), Value::Number(408));
        v.insert("command".into(), Value::Shell("'a' 'b c'".into()));
        v
    }

    #[test]
    fn placeholders_are_replaced_and_shell_syntax_is_kept() {
        let t = Template::parse(
            "#!/bin/bash\n#SBATCH -n {ntasks}\ncd \"$AUTOLB_RUN_DIR\"\necho ${SLURM_JOB_ID} {nproc.IFS} $(( {nproc.IFS} / 2 ))\n\
             for i in {1..3} {a,b}; do { true; }; done\necho {{ntasks}\n{command}\n",
            "job.sh",
        )
        .unwrap();
        let out = t.render(&values(), Mode::Shell).unwrap();
        assert_eq!(
            out,
            "#!/bin/bash\n#SBATCH -n 648\ncd \"$AUTOLB_RUN_DIR\"\necho ${SLURM_JOB_ID} 408 $(( 408 / 2 ))\n\
             for i in {1..3} {a,b}; do { true; }; done\necho {ntasks}\n'a' 'b c'\n"
        );
    }

    #[test]
    fn unknown_placeholders_name_the_line() {
        let t = Template::parse("a\nb\nsrun -n {ntask}\n", "job.sh").unwrap();
        let e = t.check_names(RUN_PLACEHOLDERS).unwrap_err();
        assert!(e.contains("job.sh: line 3") && e.contains("{ntask}"), "{e}");
        assert!(t.check_names(&["ntask"]).is_ok());
        let e = Template::parse("x {nproc.OCE}\n", "job.sh")
            .unwrap()
            .render(&values(), Mode::Shell)
            .unwrap_err();
        assert!(
            e.contains("line 1") && e.contains("OCE") && e.contains("IFS"),
            "{e}"
        );
    }

    #[test]
    fn text_placeholders_are_refused_with_their_variable() {
        for (text, var) in crate::executor::env::TEXT_PLACEHOLDERS {
            let t = Template::parse(
                &format!("#!/bin/sh\ncat <<EOT\n{{{text}}}\nEOT\n"),
                "job.sh",
            )
            .unwrap();
            let e = t.check_names(&["run_dir", "autolb", text]).unwrap_err();
            assert!(
                e.starts_with("job.sh: line 3: {") && e.contains(&format!("\"${var}\"")),
                "{e}"
            );
        }
    }

    #[test]
    fn exports_go_after_the_sbatch_options() {
        let exports = "export A='1'\n";
        assert_eq!(
            with_exports("#!/bin/bash\n#SBATCH -n 1\n\n# x\nset -e\n#SBATCH --late\n", exports),
            "#!/bin/bash\n#SBATCH -n 1\n\n# x\n# Set by autolb for this run:\nexport A='1'\nset -e\n#SBATCH --late\n"
        );
        assert_eq!(
            with_exports("#!/bin/sh", exports),
            "#!/bin/sh\n# Set by autolb for this run:\nexport A='1'\n"
        );
    }

    #[test]
    fn word_mode_inserts_numbers_and_refuses_shell_values() {
        let t = Template::parse("--n={nproc.IFS}/x", "command").unwrap();
        assert_eq!(t.render(&values(), Mode::Word).unwrap(), "--n=408/x");
        let t = Template::parse("{command}", "command").unwrap();
        assert!(t.render(&values(), Mode::Word).is_err());
    }

    #[test]
    fn multi_prog_ranks_are_contiguous_in_order() {
        let groups = vec![
            RankGroup {
                name: "IFS".into(),
                ntasks: 408,
                command: vec!["./ifs master".into(), "-e".into(), "ECE3".into()],
            },
            RankGroup {
                name: "NEMO".into(),
                ntasks: 240,
                command: vec!["./nemo.exe".into()],
            },
            RankGroup {
                name: "XIOS".into(),
                ntasks: 1,
                command: vec!["./xios_server.exe".into()],
            },
        ];
        let text = render_multi_prog("i01-t01-r1", &groups).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with('#') && lines[0].contains("649 tasks"));
        assert_eq!(lines[1], "0-407 './ifs master' '-e' 'ECE3'");
        assert_eq!(lines[2], "408-647 './nemo.exe'");
        assert_eq!(lines[3], "648 './xios_server.exe'");
        let bad = vec![RankGroup {
            name: "IFS".into(),
            ntasks: 1,
            command: vec!["it's".into()],
        }];
        assert!(render_multi_prog("r", &bad).is_err());
    }

    #[test]
    fn launch_gives_each_component_its_threads_and_fails_with_a_step() {
        let step = |name: &str, ranks, threads, program: &str| LaunchStep {
            name: name.into(),
            ranks,
            threads,
            command: vec!["sh".into(), "-c".into(), program.into()],
        };
        let text = render_launch(
            &[
                step("oifs", 64, 4, "echo oifs $OMP_NUM_THREADS >> out"),
                step("nemo", 200, 1, "echo nemo $OMP_NUM_THREADS >> out"),
            ],
            false,
        )
        .unwrap();
        assert!(
            text.contains("OMP_NUM_THREADS=4 srun --ntasks=64 --cpus-per-task=4 'sh' '-c'"),
            "{text}"
        );
        assert!(text.contains("OMP_NUM_THREADS=1 srun --ntasks=200 --cpus-per-task=1 'sh'"));
        assert!(!text.contains("--overlap"));
        assert!(render_launch(&[step("x", 1, 1, "true")], true)
            .unwrap()
            .contains("--overlap"));
        // Run it with an srun that drops its options: each step sees its own threads, and the
        // status is the failed step's.
        let dir = tempfile::tempdir().unwrap();
        let fake = "srun() { while [ \"${1#--}\" != \"$1\" ]; do shift; done; \"$@\"; }\n";
        let run = |text: &str| {
            std::process::Command::new("bash")
                .arg("-c")
                .arg(format!("{fake}{text}"))
                .current_dir(dir.path())
                .status()
                .unwrap()
        };
        assert!(run(&text).success());
        let mut out: Vec<String> = std::fs::read_to_string(dir.path().join("out"))
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        out.sort();
        assert_eq!(out, ["nemo 1", "oifs 4"]);
        let failing =
            render_launch(&[step("a", 1, 1, "exit 3"), step("b", 1, 2, "true")], false).unwrap();
        assert_eq!(run(&failing).code(), Some(3));
    }

    #[test]
    fn nodes_time_limits_and_file_names() {
        assert_eq!(nodes_for(648, 48), 14);
        assert_eq!(nodes_for(48, 48), 1);
        assert_eq!(nodes_for(0, 48), 1);
        for ok in ["30", "10:00", "01:30:00", "1-00", "2-12:00:00"] {
            assert!(validate_time_limit(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1h", "1:2:3:4", "x-01", "1-", "--x"] {
            assert!(validate_time_limit(bad).is_err(), "{bad}");
        }
        assert_eq!(time_limit_from_seconds(5.0), "1");
        assert_eq!(time_limit_from_seconds(3601.0), "61");
        assert_eq!(sbatch_filename_escape("/a%j/b"), "/a%%j/b");
    }
}
