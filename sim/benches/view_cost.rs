//! What the live view costs a real-time simulation (issue 16): the `empty`
//! world in real time, a program driving its tank along five legs (about
//! 4.4 s), alternately without and with a client fetching the view's state
//! 25 times a second as the page does; prints each run's tick lateness
//! (how long after its deadline each 2 ms tick was done), how long the
//! view's snapshots held the simulator's and the brick's locks, and the
//! CPU time of the view's threads (its own and tiny_http's, from
//! /proc/self/task/*/schedstat) as a share of one core.
//!
//!     cargo bench -p ev3sysfs-sim --bench view_cost
//!
//! Needs what the simulated brick needs (`/dev/fuse`, root or fusermount3);
//! says so and exits without them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/view/cost.rs"]
mod cost;
#[path = "../tests/view/threads.rs"]
mod threads;

const RUNS: usize = 3;

fn main() {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let (mut p99, mut cpu) = ([Vec::new(), Vec::new()], Vec::new());
    for i in 1..=RUNS {
        let mut without = None;
        for page in [false, true] {
            let run = match cost::run(page) {
                Ok(run) => run,
                Err(e) => {
                    println!("skipped: no simulated brick here: {e}");
                    return;
                }
            };
            let l = run.lateness;
            p99[usize::from(page)].push(ms(l.p99));
            print!(
                "run {i} {}: ticks late {:.2} ms p50, {:.2} ms p99, {:.2} ms max ({} ticks, {} dropped)",
                if page { "with the page   " } else { "without the page" },
                ms(l.p50),
                ms(l.p99),
                ms(l.max),
                l.ticks,
                l.dropped
            );
            match run.view {
                Some(v) => {
                    cpu.push(v.cpu_share * 100.0);
                    println!(
                        "; the view {:.1} states/s, {:.2} % of a core, held the simulator \
                         {:.1} us mean / {:.1} us max, the brick {:.1} us mean / {:.1} us max",
                        v.fps,
                        v.cpu_share * 100.0,
                        v.frames.locked_mean.as_secs_f64() * 1e6,
                        v.frames.locked_max.as_secs_f64() * 1e6,
                        v.frames.brick_mean.as_secs_f64() * 1e6,
                        v.frames.brick_max.as_secs_f64() * 1e6
                    );
                }
                None => println!(),
            }
            match &without {
                None => without = Some(run),
                Some(first) => {
                    let (mm, degrees) = cost::apart(first, &run);
                    println!("run {i}: the paths {mm:.3} mm, {degrees:.3} degrees apart");
                }
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    println!(
        "median of {RUNS}: tick lateness p99 {:.2} ms without the page, {:.2} ms with it; \
         the view {:.2} % of a core at 25 states/s",
        median(&mut p99[0]),
        median(&mut p99[1]),
        median(&mut cpu)
    );
}
