//! Holds a ShaleDB database open until its standard input closes: the native side of the
//! JavaScript package's lock tests, which check that native ShaleDB and the Node.js backend
//! honour each other's `LOCK` file.
//!
//! Usage: `lock_holder <database directory>`.
//! - Opens the database with `Options::default()`. On success prints `locked` and a newline,
//!   waits until standard input reaches end of file, closes the database and exits with 0.
//! - If opening fails, prints the error's code (`LOCKED`, `IO`, ...) and a newline on standard
//!   output, the full message on standard error, and exits with 1 at once.
//! - Without a directory argument it exits with 2.

use std::io::{self, Write};
use std::process::ExitCode;

use shaledb::{Db, Options};

fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: lock_holder <database directory>");
        return Ok(ExitCode::from(2));
    };
    let mut stdout = io::stdout().lock();
    let db = match Db::open(&dir, Options::default()) {
        Ok(db) => db,
        Err(e) => {
            writeln!(stdout, "{}", e.code())?;
            stdout.flush()?;
            eprintln!("lock_holder: {e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    writeln!(stdout, "locked")?;
    stdout.flush()?;
    io::copy(&mut io::stdin().lock(), &mut io::sink())?;
    db.close()?;
    Ok(ExitCode::SUCCESS)
}
