//! The simulator's control protocol (issue 18): any bytes, cut into any
//! writes, give one result per line, never a panic; every line that parses
//! gives a command, every other an error message.
#![no_main]

use ev3sysfs_sim::control::{Command, LineBuffer, MAX_LINE};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (Vec<u8>, Vec<u8>)| {
    let (first, second) = input;
    let mut lines = LineBuffer::new();
    let mut count = 0usize;
    let mut serve = |line: Result<&str, String>| {
        count += 1;
        if let Ok(text) = line {
            assert!(text.len() <= MAX_LINE);
            assert!(!text.contains('\n'));
            let _ = Command::parse(text);
        }
    };
    lines.push(&first, &mut serve);
    lines.push(&second, &mut serve);
    lines.end(&mut serve);
    let newlines = first.iter().chain(&second).filter(|&&b| b == b'\n').count();
    assert!(count == newlines || count == newlines + 1);
});
