//! The attribute value parsers: integers, text, word lists, the `[selected]`
//! entry of a trigger list, state flag sets.
#![no_main]

use ev3sysfs::motor::State;
use ev3sysfs::value::{flags, list_contains, parse_int, parse_str, selected, trim, words};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|raw: &[u8]| {
    let trimmed = trim(raw);
    assert!(trimmed.len() <= raw.len());
    if let Some(v) = parse_int(raw) {
        // Whatever parses prints back to a value that parses the same.
        assert_eq!(parse_int(v.to_string().as_bytes()), Some(v));
        let digits = trimmed.strip_prefix(b"-").or(trimmed.strip_prefix(b"+"));
        assert!(digits.unwrap_or(trimmed).iter().all(u8::is_ascii_digit));
    }
    let Some(text) = parse_str(raw) else {
        return;
    };
    let all: Vec<&str> = words(text).collect();
    for w in &all {
        assert!(list_contains(text, w));
        assert!(!w.contains(|c: char| c.is_ascii_whitespace()));
    }
    if let Some(s) = selected(text) {
        // The selected entry of a trigger list is one of its words.
        assert!(all.contains(&s), "{s:?} not in {all:?}");
    }
    match flags(text, &State::NAMES) {
        Ok(bits) => {
            assert!(bits < 1 << State::NAMES.len());
            let state = State::from_bits(bits);
            assert_eq!(state.bits(), bits);
            // Each flag printed once, in the kernel's order.
            let mut printed: Vec<&str> = all.clone();
            printed.sort_by_key(|w| State::NAMES.iter().position(|n| n == w));
            printed.dedup();
            assert_eq!(state.to_string(), printed.join(" "));
        }
        Err(word) => assert!(all.contains(&word)),
    }
    // Flags with more names than bits never overflow.
    let many: Vec<&str> = all.iter().copied().take(64).collect();
    let _ = flags(text, &many);
});
