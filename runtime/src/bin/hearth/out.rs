//! The CLI's standard output. A reader that goes away (`hearth send … | head -3`) ends the
//! command quietly, with the status a shell gives a command ended by SIGPIPE, as it ends `ls`:
//! Rust ignores SIGPIPE, so without this every later `println!` would panic on the broken pipe
//! and print a backtrace. The connection closes with the CLI, which cancels the task as any
//! client's hangup does: nobody reads the rest of the answer.

use std::io::{ErrorKind, Write};

/// The status of a command whose output's reader went away (128 + SIGPIPE), as shells report
/// it for `ls` in `ls | head`.
pub(crate) const READER_GONE: i32 = 141;

/// `println!` for the CLI's answers (see the module).
macro_rules! outln {
    () => {
        $crate::out::write_out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` for the CLI's answers (see the module).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write_out(format_args!($($arg)*))
    };
}

/// Writes `args` to standard output and flushes it, so a streamed answer shows as it comes.
pub(crate) fn write_out(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        ended(&e);
    }
}

/// Writes `bytes` as they are (an item's content) to standard output.
pub(crate) fn write_bytes(bytes: &[u8]) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        ended(&e);
    }
}

/// Standard output failed: quietly when its reader went away, with the reason otherwise.
fn ended(e: &std::io::Error) -> ! {
    if e.kind() == ErrorKind::BrokenPipe {
        std::process::exit(READER_GONE);
    }
    eprintln!("hearth: writing to standard output: {e}");
    std::process::exit(1);
}
