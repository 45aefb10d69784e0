//! `bin_data_format` names and `bin_data` decoding at any index.
#![no_main]

use ev3sysfs::sensor::BinFormat;
use libfuzzer_sys::fuzz_target;

const FORMATS: [BinFormat; 8] = [
    BinFormat::U8,
    BinFormat::S8,
    BinFormat::U16,
    BinFormat::S16,
    BinFormat::S16Be,
    BinFormat::S32,
    BinFormat::S32Be,
    BinFormat::Float,
];

fuzz_target!(|input: (&str, usize, &[u8])| {
    let (name, index, raw) = input;
    let _ = BinFormat::parse(name);
    for format in FORMATS {
        // The overflow edges, on every input: random indices rarely get there.
        for edge in [usize::MAX / format.size(), usize::MAX, index.wrapping_neg()] {
            let _ = format.decode(raw, edge);
        }
        let fits = index
            .checked_mul(format.size())
            .and_then(|at| at.checked_add(format.size()))
            .is_some_and(|end| end <= raw.len());
        let value = format.decode(raw, index);
        assert_eq!(value.is_some(), fits, "{format:?} {index} {}", raw.len());
        for i in 0..raw.len() / format.size() {
            assert!(format.decode(raw, i).is_some());
        }
    }
});
