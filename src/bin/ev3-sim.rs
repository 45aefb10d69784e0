//! `ev3-sim`: serves a simulated brick (placeholder, filled in below).
fn main() {}
