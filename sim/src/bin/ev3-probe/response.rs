//! `--response`: how long after a `run-forever` write the motor reports
//! `running`, and starts to move.

use std::time::{Duration, Instant};

use ev3sysfs::motor::{StopAction, TachoMotor};

use crate::stats::{micros, Summary};

/// Per-trial delays, in nanoseconds.
pub struct Response {
    pub to_running: Vec<u64>,
    pub to_moving: Vec<u64>,
    pub timeouts: usize,
}

/// How often the position is re-read: short enough for the driver's 2 ms
/// tacho sampling, long enough not to hog the CPU (ev3dev runs programs at
/// nice -10).
const POLL: Duration = Duration::from_millis(1);
const GIVE_UP: Duration = Duration::from_secs(2);

/// Runs `trials` start/stop cycles at half speed.
pub fn measure(motor: &TachoMotor, trials: usize) -> Result<Response, String> {
    let e = |e: ev3sysfs::Error| e.to_string();
    motor.set_stop_action(StopAction::Brake).map_err(e)?;
    motor.set_speed_sp(motor.max_speed() / 2).map_err(e)?;
    let mut r = Response {
        to_running: Vec::with_capacity(trials),
        to_moving: Vec::with_capacity(trials),
        timeouts: 0,
    };
    for _ in 0..trials {
        let start_position = motor.position().map_err(e)?;
        let t0 = Instant::now();
        motor
            .send(ev3sysfs::motor::Command::RunForever)
            .map_err(e)?;
        let mut running = None;
        let mut moving = None;
        while (running.is_none() || moving.is_none()) && t0.elapsed() < GIVE_UP {
            if running.is_none() && motor.state().map_err(e)?.running() {
                running = Some(t0.elapsed());
            }
            if moving.is_none() && motor.position().map_err(e)? != start_position {
                moving = Some(t0.elapsed());
            }
            if running.is_none() || moving.is_none() {
                std::thread::sleep(POLL);
            }
        }
        motor.stop().map_err(e)?;
        match (running, moving) {
            (Some(a), Some(b)) => {
                r.to_running.push(a.as_nanos() as u64);
                r.to_moving.push(b.as_nanos() as u64);
            }
            _ => r.timeouts += 1,
        }
        // Let it come to rest before the next trial.
        let rest = Instant::now();
        while motor.speed().map_err(e)? != 0 && rest.elapsed() < GIVE_UP {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    Ok(r)
}

pub fn report(r: &mut Response) -> String {
    let mut out =
        String::from("\nresponse to run-forever (µs): min, p50, p90, max over the trials\n");
    for (what, samples) in [
        ("state shows running", &mut r.to_running),
        ("position changes", &mut r.to_moving),
    ] {
        match Summary::of(samples) {
            Some(s) => out.push_str(&format!(
                "{what:>20}: {:>8} {:>8} {:>8} {:>8}  ({} trials)\n",
                micros(s.min as f64),
                micros(s.p50 as f64),
                micros(s.p90 as f64),
                micros(s.max as f64),
                s.ops
            )),
            None => out.push_str(&format!("{what:>20}: no trial finished\n")),
        }
    }
    if r.timeouts > 0 {
        out.push_str(&format!(
            "{} trial(s) saw no running state or no motion within {GIVE_UP:?}\n",
            r.timeouts
        ));
    }
    out
}
