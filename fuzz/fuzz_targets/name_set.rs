//! Name sets (`commands`, `stop_actions`) against any list and any number
//! of known names, and the single-name parsers.
#![no_main]

use ev3sysfs::motor::{NameSet, Polarity, StopAction};
use ev3sysfs::value::words;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, Vec<&str>)| {
    let (list, names) = input;
    let set = NameSet::parse(list, &names);
    for (i, name) in names.iter().enumerate() {
        // The first of equal names counts; only 16 fit in a set.
        let first = names.iter().position(|n| n == name) == Some(i);
        let expected = first && i < 16 && words(list).any(|w| w == *name);
        assert_eq!(set.contains(i), expected, "{i} {name:?}");
    }
    assert!(!set.contains(names.len().max(16)));
    assert!(!set.contains(usize::MAX));
    for word in words(list) {
        if let Some(a) = StopAction::parse(word) {
            assert_eq!(a.as_str(), word);
        }
        if let Some(p) = Polarity::parse(word) {
            assert_eq!(p.as_str(), word);
        }
    }
});
