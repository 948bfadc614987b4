//! No value becomes shell code: the injection forms that broke quoting by parsing the script,
//! and a family of hostile campaign directory names, through the `command` executor,
//! `campaign exec` and the Slurm executor (with stand-in `sbatch`, `squeue`, `sacct` and
//! `srun` on the PATH of the autolb process only).
//!
//! A template that names a text placeholder (`{run_dir}`, `{run}`, `{component}` ...) is
//! refused before anything runs, with one line showing the `"$AUTOLB_..."` form; written that
//! way, every form runs exactly the intended command, which sees exactly the directory, and
//! nothing plants a `PWNED` file anywhere.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{autolb, autolb_path, campaign_file, init, CampaignToml};
use autolb::campaign::State;

/// Directory names that are shell code, or that quoting by context got wrong.
const HOSTILE: &[&str] = &[
    "x$(touch PWNED)",
    "x`touch PWNED`",
    "x;touch PWNED;y",
    "x'$(touch PWNED)'",
    "x\"$(touch PWNED)\"",
    "it's",
    "a\"b",
    "back\\slash",
    "new\nline$(touch PWNED)",
    "$'\\x41'",
    "two  spaces & more",
    "-leading dash",
    "*?[glob]",
    "ünïcödé ✓",
    "%j 100%",
];

/// Shell contexts where a quoted value is easy to get wrong, each naming the run directory
/// where `{run_dir}` stands ([`script`] writes it as the variable or the placeholder): a comment with an apostrophe, a here-document, backticks and `$(...)`
/// inside double quotes, plain, and arithmetic on a placeholder's digits. Each writes what it
/// saw into its own file.
const FORMS: &[(&str, &str)] = &[
    (
        "seen-comment",
        "# don't edit\nprintf %s {run_dir} > seen-comment",
    ),
    ("seen-heredoc", "cat > seen-heredoc <<EOT\n{run_dir}\nEOT"),
    (
        "seen-backtick",
        "X=\"`printf %s {run_dir}`\"; printf %s \"$X\" > seen-backtick",
    ),
    (
        "seen-dollar",
        "X=\"$(printf %s {run_dir})\"; printf %s \"$X\" > seen-dollar",
    ),
    (
        "seen-plain",
        "cd {run_dir} && printf %s {run_dir} > seen-plain",
    ),
];

/// The one script of every form, `{run_dir}` written as `what`.
fn script(what: &str) -> String {
    let mut s: Vec<String> = FORMS
        .iter()
        .map(|(_, form)| form.replace("{run_dir}", what))
        .collect();
    s.push("echo $(( {nproc.IFS} / 2 )) > half".into());
    s.join("\n")
}

/// The forms written as they must be: the variable, quoted where a shell splits words (in a
/// here-document the expansion is data already).
fn safe_script() -> String {
    script("\"$AUTOLB_RUN_DIR\"")
        .replace("<<EOT\n\"$AUTOLB_RUN_DIR\"\n", "<<EOT\n$AUTOLB_RUN_DIR\n")
}

/// Every file named `PWNED` under `root`.
fn planted(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if entry.file_name() == "PWNED" {
                found.push(path.clone());
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            }
        }
    }
    found
}

/// Checks what the forms saw in `run_dir`: exactly the directory, and the arithmetic.
fn check_seen(run_dir: &Path, nproc_ifs: u32) {
    let want = run_dir.display().to_string();
    for (file, _) in FORMS {
        let seen = std::fs::read_to_string(run_dir.join(file))
            .unwrap_or_else(|e| panic!("{file} in {}: {e}", run_dir.display()));
        assert_eq!(seen.trim_end_matches('\n'), want, "{file}");
    }
    let half = std::fs::read_to_string(run_dir.join("half")).unwrap();
    assert_eq!(half.trim(), (nproc_ifs / 2).to_string());
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// `campaign init DIR --config FILE`, from `work`.
fn init_output(dir: &Path, file: &Path, work: &Path) -> Output {
    autolb()
        .args(["campaign", "init"])
        .arg(dir)
        .arg("--config")
        .arg(file)
        .current_dir(work)
        .output()
        .unwrap()
}

/// Asserts a refusal: exit 2, one line naming `place` and showing `"$AUTOLB_RUN_DIR"`.
fn assert_refused(out: &Output, place: &str) {
    let text = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert_eq!(text.trim().lines().count(), 1, "{text}");
    assert!(
        text.contains(place)
            && text.contains("{run_dir} is not written")
            && text.contains("write \"$AUTOLB_RUN_DIR\""),
        "{place}: {text}"
    );
}

/// A TOML string.
fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// An `[executor]` table of the Slurm executor, `extra` added to `[executor.slurm]`.
fn slurm_table(command: Option<&[String]>, extra: &str) -> String {
    let command = command
        .map(|c| {
            let words: Vec<String> = c.iter().map(|w| toml_str(w)).collect();
            format!("command = [{}]\n", words.join(", "))
        })
        .unwrap_or_default();
    format!("[executor]\nkind = \"slurm\"\njobs = 1\nretries = 0\n{command}[executor.slurm]\npoll_interval_s = 0.1\n{extra}")
}

#[test]
fn templates_naming_a_text_placeholder_are_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let bad = script("{run_dir}");
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let toml_list = |w: &[String]| {
        let q: Vec<String> = w.iter().map(|s| toml_str(s)).collect();
        format!("[{}]", q.join(", "))
    };
    let cases: Vec<(String, &str)> = vec![
        // command executor: `bash -c -` (the `-` ends bash's options) and each form.
        (
            format!(
                "[executor]\nkind = \"command\"\ncommand = {}\n",
                toml_list(&words(&["bash", "-c", "-", &bad]))
            ),
            "[executor] command[3]",
        ),
        // A whole argument of a program run without a shell is refused too.
        (
            "[executor]\nkind = \"command\"\ncommand = [\"./model\", \"{run_dir}\"]\n".into(),
            "[executor] command[1]",
        ),
        // Slurm: the documented `bash -c "cd {run_dir} && ..."`.
        (
            slurm_table(Some(&words(&["bash", "-c", "cd {run_dir} && ./run"])), ""),
            "[executor] command[2]: line 1",
        ),
        // Slurm: an MPMD program of `{launch}` / `{multi_prog}`.
        (
            slurm_table(
                None,
                "script = \"#!/bin/sh\\n{launch}\\n\"\n[executor.slurm.multi_prog.programs]\nIFS = [\"bash\", \"-c\", \"echo {run_dir} > where.txt\"]\nNEMO = [\"true\"]\n",
            ),
            "multi_prog IFS: line 1",
        ),
        // Slurm: a here-document in a job template file.
        (
            slurm_table(None, "template = \"job.tmpl\"\n"),
            "job.tmpl: line 4",
        ),
    ];
    std::fs::write(
        tmp.path().join("job.tmpl"),
        "#!/bin/bash\n#SBATCH --comment=x\ncat > f <<EOT\n{run_dir}\nEOT\n",
    )
    .unwrap();
    for (k, (table, place)) in cases.iter().enumerate() {
        let file = CampaignToml::default()
            .set("top", 1)
            .set("repetitions", 1)
            .table(table)
            .write(tmp.path(), &format!("c{k}.toml"));
        let dir = work.join(format!("x$(touch PWNED)-{k}"));
        assert_refused(&init_output(&dir, &file, &work), place);
        assert!(!dir.join("campaign.json").exists());
        // `campaign plan` checks the same.
        let out = autolb()
            .args(["campaign", "plan", "--config"])
            .arg(&file)
            .current_dir(&work)
            .output()
            .unwrap();
        assert_refused(&out, place);
    }

    // `campaign exec`: refused naming the argument; the run stays waiting, nothing ran.
    let file = campaign_file(tmp.path(), "IFS", "NEMO", 1, 2);
    let dir = work.join("x$(touch PWNED);touch PWNED;y");
    init(&dir, &file);
    for argv in [
        words(&["bash", "-c", "-", &bad]),
        words(&["bash", "-c", &bad]),
        words(&["sh", "-c", "echo $1", "sh", "{run}"]),
    ] {
        let out = autolb()
            .args(["campaign", "exec"])
            .arg(&dir)
            .args(["--iteration", "0", "--test", "0", "--repetition", "1", "--"])
            .args(&argv)
            .current_dir(&work)
            .output()
            .unwrap();
        let text = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert_eq!(text.trim().lines().count(), 1, "{text}");
        assert!(
            text.contains("CMD[") && text.contains("\"$AUTOLB_RUN"),
            "{text}"
        );
    }
    let run_dir = State::load(&dir).unwrap().request(&dir, 0, 0, 0).run_dir;
    assert!(!run_dir.join("seen-plain").exists());
    let waiting = autolb::campaign::next(&dir).unwrap();
    assert!(waiting.iter().any(|r| r.run == "i00-t00-r1"), "{waiting:?}");
    assert_eq!(planted(tmp.path()), Vec::<PathBuf>::new());
}

#[test]
fn exec_runs_only_the_intended_command_in_every_hostile_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let file = campaign_file(tmp.path(), "IFS", "NEMO", 1, 1);
    for (k, name) in HOSTILE.iter().enumerate() {
        let dir = work.join(format!("{k}-{name}"));
        init(&dir, &file);
        let run = autolb::campaign::next(&dir).unwrap().remove(0);
        let nproc_ifs = run.nproc.get("IFS").copied().unwrap();
        // `bash -c -`, then the forms, then the stand-in model into the working directory.
        let script = format!(
            "{}\nexec \"$0\" simulate --campaign \"$1\" --out .",
            safe_script()
        );
        let out = autolb()
            .args(["campaign", "exec"])
            .arg(&dir)
            .args(["--iteration", "0", "--test", "0", "--repetition", "1", "--"])
            .args(["bash", "-c", "-", &script])
            .arg(autolb_path())
            .arg(&dir)
            .current_dir(&work)
            .output()
            .unwrap();
        assert!(out.status.success(), "{name:?}: {}", stderr(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("recorded i00-t00-r1: "),
            "{name:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            stderr(&out)
        );
        check_seen(&run.run_dir, nproc_ifs);
    }
    assert_eq!(planted(tmp.path()), Vec::<PathBuf>::new());
}

/// Makes the campaign `work/K-NAME` from `table` (an `[executor]` table), runs it to the end
/// with `path` as the driver's PATH, and returns its first run's directory and IFS ranks, after
/// checking that run is done.
fn run_campaign(tmp: &Path, k: usize, name: &str, table: &str, path: &str) -> (PathBuf, u32) {
    let work = tmp.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let file = CampaignToml::default()
        .set("top", 1)
        .set("initial_step", 24)
        .set("minimum_step", 24)
        .set("repetitions", 1)
        .table(table)
        .write(tmp, &format!("c{k}.toml"));
    let dir = work.join(format!("{k}-{name}"));
    let out = init_output(&dir, &file, &work);
    assert!(out.status.success(), "{name:?}: {}", stderr(&out));
    let out = autolb()
        .args(["campaign", "run"])
        .arg(&dir)
        .env("PATH", path)
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(out.status.success(), "{name:?}: {}", stderr(&out));
    let state = State::load(&dir).unwrap();
    let (i, t, r) = state.run_positions().next().unwrap();
    let request = state.request(&dir, i, t, r);
    let logs = std::fs::read_dir(&request.run_dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.ends_with(".err") || n == "stderr"
        })
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<String>();
    assert_eq!(
        state.run((i, t, r)).state,
        autolb::campaign::RunState::Done,
        "{name:?} ({k}): {logs}"
    );
    (request.run_dir.clone(), request.nproc[0].1)
}

/// The stand-in model writing its timing output into `out`.
fn model(out: &str) -> String {
    format!(
        "{} simulate --out {out} --comp ATMIFS={{nproc.IFS}} --comp oceanx={{nproc.NEMO}}",
        autolb_path().display()
    )
}

#[test]
fn the_command_executor_runs_only_the_intended_command_in_every_hostile_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let table = format!(
        "[executor]\nkind = \"command\"\ncommand = [\"bash\", \"-c\", \"-\", {}]\n",
        toml_str(&format!("{}\n{}", safe_script(), model(".")))
    );
    let path = std::env::var("PATH").unwrap_or_default();
    for (k, name) in HOSTILE.iter().enumerate() {
        let (run_dir, nproc_ifs) = run_campaign(tmp.path(), k, name, &table, &path);
        check_seen(&run_dir, nproc_ifs);
    }
    assert_eq!(planted(tmp.path()), Vec::<PathBuf>::new());
}

/// Stand-in Slurm tools: `sbatch` runs the job script at once in its `--chdir` with bash and
/// records it as COMPLETED (or FAILED with its exit code) for `sacct`; `squeue` knows no
/// jobs; `srun` runs its program once (or the first program of each line of a
/// `--multi-prog` file, whose words it splits as srun does, with `xargs`).
fn stand_in_slurm(bin: &Path) {
    let state = bin.display();
    let tools = [
        (
            "sbatch",
            format!(
                r#"#!/bin/sh
chdir=. name=job
for a in "$@"; do
  case "$a" in
    --chdir=*) chdir="${{a#--chdir=}}" ;;
    --job-name=*) name="${{a#--job-name=}}" ;;
  esac
  script="$a"
done
id=$(( $(cat "{state}/next" 2>/dev/null || echo 100) + 1 ))
echo "$id" > "{state}/next"
cd "$chdir" || exit 1
SLURM_JOB_ID=$id bash "$script" > "slurm-$id.out" 2> "slurm-$id.err" < /dev/null
rc=$?
if [ "$rc" = 0 ]; then state=COMPLETED; else state=FAILED; fi
echo "$id|$name|$state|$rc:0" >> "{state}/sacct.out"
echo "$id"
"#
            ),
        ),
        ("squeue", "#!/bin/sh\nexit 0\n".to_string()),
        (
            "sacct",
            format!("#!/bin/sh\ncat \"{state}/sacct.out\" 2>/dev/null\nexit 0\n"),
        ),
        ("scancel", "#!/bin/sh\nexit 0\n".to_string()),
        (
            "srun",
            r#"#!/bin/sh
while [ $# -gt 0 ]; do
  case "$1" in
    --multi-prog)
      grep -v '^#' "$2" | while read -r ranks words; do
        printf '%s\n' "$words" | SLURM_PROCID="${ranks%%-*}" xargs env || exit 1
      done
      exit $? ;;
    -*) shift ;;
    *) exec "$@" ;;
  esac
done
"#
            .to_string(),
        ),
    ];
    for (name, body) in tools {
        let path = bin.join(name);
        std::fs::write(&path, body).unwrap();
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&path, perms).unwrap();
    }
}

#[test]
fn slurm_jobs_run_only_the_intended_command_in_every_hostile_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    stand_in_slurm(&bin);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Three job scripts: the built-in one around `[executor] command`; a template with the
    // forms and `{launch}`; a template with `srun --multi-prog "$AUTOLB_MULTI_PROG"`.
    let command: Vec<String> = vec![
        "bash".into(),
        "-c".into(),
        format!("{}\n{}", safe_script(), model(".")),
    ];
    let template = format!(
        "#!/bin/bash\n#SBATCH --comment=forms\n{}\n{{launch}}\n",
        safe_script()
    );
    std::fs::write(tmp.path().join("launch.tmpl"), template).unwrap();
    let programs = format!(
        "[executor.slurm.multi_prog.programs]\nIFS = [\"sh\", \"-c\", {}]\nNEMO = [\"true\"]\n",
        toml_str(&format!(
            "printf %s \"$AUTOLB_RUN_DIR\" > seen-step && {}",
            model("\"$AUTOLB_RUN_DIR\"")
        ))
    );
    let tables = [
        slurm_table(Some(&command), ""),
        slurm_table(None, &format!("template = \"launch.tmpl\"\n{programs}")),
        slurm_table(
            None,
            &format!(
                "script = {}\n{programs}",
                toml_str(&format!(
                    "#!/bin/bash\n{}\nsrun --ntasks={{ntasks}} --multi-prog \"$AUTOLB_MULTI_PROG\"\n",
                    safe_script()
                ))
            ),
        ),
    ];
    for (k, name) in HOSTILE.iter().enumerate() {
        let table = &tables[k % tables.len()];
        let (run_dir, nproc_ifs) = run_campaign(tmp.path(), k, name, table, &path);
        check_seen(&run_dir, nproc_ifs);
        if k % tables.len() != 0 {
            let step = std::fs::read_to_string(run_dir.join("seen-step")).unwrap();
            assert_eq!(step, run_dir.display().to_string(), "{name:?}");
        }
    }
    assert_eq!(planted(tmp.path()), Vec::<PathBuf>::new());
}
