//! `autolb completions SHELL` and `autolb man`: the shell completions and the manual pages,
//! generated from the same clap definitions that parse the arguments, so they cannot fall
//! behind a new flag. The text is made in memory and then written through
//! [`crate::shared::output`], so a closed pipe ends quietly like every other command.

use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory};
use clap_complete::Shell;
use color_eyre::eyre::Result;

use crate::shared::error::user;
use crate::shared::output::{outln, write_out};

#[derive(Debug, Args)]
#[command(after_help = "Install, e.g.:\n  \
                  bash: autolb completions bash > ~/.local/share/bash-completion/completions/autolb\n  \
                  zsh:  autolb completions zsh > ~/.zfunc/_autolb   (with fpath+=~/.zfunc)\n  \
                  fish: autolb completions fish > ~/.config/fish/completions/autolb.fish")]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Read it with `autolb man | man -l -`; install the pages with \
                  `autolb man --out ~/.local/share/man/man1`."
)]
pub struct ManArgs {
    /// Write one page per command and subcommand (autolb.1, autolb-campaign-init.1, ...) into
    /// DIR (created if needed) instead of printing the page of autolb.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn completions(args: &CompletionsArgs) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut super::Cli::command(),
        "autolb",
        &mut script,
    );
    write_out(&String::from_utf8_lossy(&script))
}

pub fn man(args: &ManArgs) -> Result<()> {
    // `help` is a flag on every page already; a page of its own would say nothing more.
    let command = super::Cli::command().disable_help_subcommand(true);
    match &args.out {
        None => write_out(&page(command)?),
        Some(dir) => {
            let written = write_pages(command, dir)?;
            for path in &written {
                outln!("wrote {}", path.display())?;
            }
            Ok(())
        }
    }
}

/// The roff page of one command.
fn page(command: clap::Command) -> Result<String> {
    let mut roff = Vec::new();
    clap_mangen::Man::new(command).render(&mut roff)?;
    Ok(String::from_utf8_lossy(&roff).into_owned())
}

/// Writes `NAME.1` for the command and, recursively, `NAME-SUB.1` for each of its
/// subcommands (clap's display names once built), the names the parent's page refers to.
fn write_pages(command: clap::Command, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .map_err(|e| user(format!("cannot create {}: {e}", dir.display())))?;
    let mut command = command;
    command.build();
    let mut written = Vec::new();
    let mut pending = vec![command];
    while let Some(command) = pending.pop() {
        pending.extend(
            command
                .get_subcommands()
                .filter(|s| !s.is_hide_set())
                .cloned(),
        );
        let name = command
            .get_display_name()
            .unwrap_or(command.get_name())
            .to_string();
        let path = dir.join(format!("{name}.1"));
        autolb::fsutil::write_atomically(&path, page(command)?.as_bytes())
            .map_err(|e| user(format!("cannot write {}: {e}", path.display())))?;
        written.push(path);
    }
    written.sort();
    Ok(written)
}
