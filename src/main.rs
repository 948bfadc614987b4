//! The `autolb` binary: the command-line interface and the terminal app on top of the library.

mod cli;
mod shared;
mod tui;

fn main() -> std::process::ExitCode {
    cli::main()
}
