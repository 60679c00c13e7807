//! The scenarios (see the binary's own docs).

use std::error::Error;
use std::io::{BufRead, Write};
use std::time::Duration;

use hearth_ipc::{
    ArenaRef, CallFrame, Doorbell, KindMask, PluginSegment, ReadResult, SEGMENT_FD, StageField,
};

pub type Outcome = Result<(), Box<dyn Error>>;

const WAIT: Duration = Duration::from_secs(20);

pub fn main() -> Outcome {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (segment, bell) = PluginSegment::attach_inherited()?;
    let arg = |i: usize| -> Result<&str, Box<dyn Error>> {
        Ok(args.get(i).map(String::as_str).ok_or("missing argument")?)
    };
    println!("attached generation={}", segment.generation());
    match arg(0)? {
        "count-field" => count_field(&segment, arg(1)?.parse()?, arg(2)?.parse()?),
        "ring" => ring(
            &segment,
            &bell,
            arg(1)?.parse()?,
            arg(2)?.parse()?,
            arg(3).is_ok_and(|a| a == "gate"),
        ),
        "echo" => echo(&segment, &bell, arg(1)?.parse()?),
        "forge" => forge(&segment),
        "outlive" => outlive(&segment),
        other => Err(format!("unknown scenario {other}").into()),
    }
}

fn count_field(segment: &PluginSegment, field: usize, rounds: u64) -> Outcome {
    let field = *StageField::ALL.get(field).ok_or("no such field")?;
    let context = segment.context();
    let mut buf = Vec::new();
    for _ in 0..rounds {
        context.read(field, &mut buf)?;
        let n: u64 = std::str::from_utf8(&buf)?.parse().unwrap_or(0);
        // Only this process writes this field, so a refusal is a bug: surface it.
        context.write(field, Some((n + 1).to_string().as_bytes()))?;
    }
    println!("done {}", field.name());
    Ok(())
}

fn ring(segment: &PluginSegment, bell: &Doorbell, events: u64, tag: u64, gate: bool) -> Outcome {
    let mut reader = segment.subscriber().reader(KindMask::ALL).with_tag(tag);
    println!("ready");
    std::io::stdout().flush()?;
    if gate {
        std::io::stdin().lock().read_line(&mut String::new())?;
    }
    let mut buf = Vec::new();
    let (mut received, mut missed) = (0u64, 0u64);
    while received + missed < events {
        match reader.next_with_doorbell(&mut buf, bell, WAIT) {
            ReadResult::Event { .. } => {
                let text = std::str::from_utf8(&buf)?;
                if !text.starts_with(&format!("tag{tag}:")) {
                    return Err(format!("foreign event delivered: {text}").into());
                }
                received += 1;
            }
            ReadResult::Lagged { missed: n } => {
                println!("lagged {n}");
                missed += n;
            }
            ReadResult::Empty => return Err("timed out waiting for events".into()),
            ReadResult::Closed => break,
        }
    }
    println!("received {received} missed {missed}");
    Ok(())
}

fn echo(segment: &PluginSegment, bell: &Doorbell, calls: u64) -> Outcome {
    let mut reader = segment.subscriber().reader(KindMask::ALL);
    println!("ready");
    std::io::stdout().flush()?;
    let arena = segment.arena();
    let (mut event, mut args) = (Vec::new(), Vec::new());
    for _ in 0..calls {
        match reader.next_with_doorbell(&mut event, bell, WAIT) {
            ReadResult::Event { .. } => {}
            other => return Err(format!("expected a call, got {other:?}").into()),
        }
        let call = CallFrame::decode(&event).ok_or("short call event")?;
        arena.read_args(&call, &mut args)?;
        args.reverse();
        arena.answer(&call, &args)?;
    }
    println!("answered {calls}");
    Ok(())
}

fn forge(segment: &PluginSegment) -> Outcome {
    let arena = segment.arena();
    let mut buf = Vec::new();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let valid: ArenaRef = serde_json::from_str(line.trim())?;
    let forged = [
        (
            "outside",
            ArenaRef {
                offset: u32::MAX - 7,
                ..valid
            },
        ),
        ("before", ArenaRef { offset: 8, ..valid }),
        (
            "unaligned",
            ArenaRef {
                offset: valid.offset + 8,
                ..valid
            },
        ),
        (
            "stale",
            ArenaRef {
                generation: valid.generation + 1,
                ..valid
            },
        ),
        (
            "too-long",
            ArenaRef {
                len: u32::MAX,
                ..valid
            },
        ),
    ];
    for (name, r) in forged {
        match arena.read(&r, &mut buf) {
            Ok(()) => println!("{name} accepted"),
            Err(err) => println!("{name} refused: {err}"),
        }
    }
    match arena.write(&valid, 0, &vec![0u8; valid.len as usize + 8]) {
        Ok(()) => println!("overlong-write accepted"),
        Err(err) => println!("overlong-write refused: {err}"),
    }
    arena.read(&valid, &mut buf)?;
    println!("still-works {}", String::from_utf8_lossy(&buf));
    Ok(())
}

fn outlive(segment: &PluginSegment) -> Outcome {
    println!("ready");
    std::io::stdout().flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let mut buf = Vec::new();
    segment.context().read(StageField::FinalText, &mut buf)?;
    println!("read {}", String::from_utf8_lossy(&buf));
    // SAFETY: fd 3 is still open (the segment owns it); ftruncate only takes its number.
    let shrink = unsafe { libc::ftruncate(SEGMENT_FD, 0) };
    let err = std::io::Error::last_os_error();
    println!(
        "shrink {}",
        if shrink == 0 {
            "allowed".to_string()
        } else {
            err.to_string()
        }
    );
    Ok(())
}
