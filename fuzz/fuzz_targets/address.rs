//! Discovery's port matching against any address and port.
#![no_main]

use ev3sysfs::address_matches;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, &str)| {
    let (address, port) = input;
    let matched = address_matches(address, port);
    if matched {
        assert!(!port.is_empty());
        // A device matches the port its own address names, in either style.
        let short = address.strip_prefix("ev3-ports:").unwrap_or(address);
        if !short.starts_with("ev3-ports:") {
            assert!(address_matches(address, short));
        }
        assert!(address_matches(address, &format!("ev3-ports:{short}")));
    }
    // Every address is on its own port (when it names one).
    if !address.is_empty() && address != "ev3-ports:" {
        assert!(address_matches(address, address));
    }
    // A longer port never matches an address's prefix: `in1` is not `in10`.
    if !address.is_empty() {
        assert!(!address_matches(address, &format!("{address}0")));
    }
});
