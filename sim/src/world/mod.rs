//! Simulated worlds: a robot in an arena behind the simulated brick's
//! files, so that its sensors see what its motors did.
//!
//! A world ([`WorldSpec`], from a TOML file or built in) names the devices
//! on each port, the robot (which motors drive which wheel, wheel diameter,
//! axle track, its footprint, where each sensor sits and looks, arms with
//! end stops) and the arena (a floor mat of coloured shapes and lines,
//! walls and obstacles). [`Simulator::add_world`](crate::Simulator::add_world)
//! plugs the devices and then, every 2 ms tick, a [`LiveWorld`]:
//! * moves the robot by differential-drive kinematics from the drive
//!   motors' shaft positions (`polarity` only changes what the files show);
//! * stops it where its footprint meets an obstacle: both drive motors are
//!   blocked (they stall, `stalled` after 100 ms, as on a table) until they
//!   push away from it;
//! * sets every sensor's values in every mode (a mode switch reads the new
//!   mode's value at once): a touch sensor is pressed while its tip is in
//!   an obstacle; a colour sensor averages the mat over a 6 mm spot
//!   (`COL-REFLECT`, `COL-COLOR` by majority, `RGB-RAW`, `REF-RAW`,
//!   `COL-AMBIENT` from the arena's ambient light); ultrasonic sensors cast
//!   three rays over a ±8° cone to the nearest obstacle (mm, at most
//!   2550); infrared proximity is 100 % at 70 cm; a gyro reads the heading
//!   change clockwise positive, plus its drift, from its last reset (a mode
//!   change or a `direct` write, as python-ev3dev2's `reset()` does).
//! * Arms are medium (or large) motors with end stops: they stall there.
//! * A wheel's `drag` is friction as a fraction of its motor's stall
//!   torque: at duty cycle `d` the wheel turns at `(d − drag) × max_speed`.
//!   The speed PID (every run command but `run-direct`) learns it back
//!   within about 0.15 s of each start and then holds its `speed_sp`, up to
//!   `(1 − drag) × max_speed`; `run-direct` never makes up for it, and a
//!   coasting wheel stops sooner. Two wheels run at one `speed_sp` (as
//!   python-ev3dev2's `MoveTank` does) curve toward the dragged one.
//!
//! The world runs in simulated time under [`Simulator::step`]
//! (deterministic: the same program gives the same [trace](LiveWorld::trace_every)),
//! or in real time with [`Simulator::run_realtime`], as `ev3-sim --world`
//! and [`Playground::brick_or_world`](crate::Playground::brick_or_world) do.
//!
//! [`Simulator::step`]: crate::Simulator::step
//! [`Simulator::run_realtime`]: crate::Simulator::run_realtime
//!
//! # World files
//!
//! Millimetres and degrees. The arena's `x` runs east, `y` north; a
//! heading is counter-clockwise from east. On the robot, `at = [forward,
//! left]` is measured from the middle of the axle.
//!
//! ```toml
//! name = "bumper"
//! about = "A tank drives to a wall; the touch sensor in front is its bumper."
//!
//! [ports]                    # what is plugged in: port = kernel driver
//! outB = "lego-ev3-l-motor"
//! outC = "lego-ev3-l-motor"
//! in1 = "lego-ev3-touch"
//!
//! [arena]
//! size = [1000, 600]         # x, y extent; default 2000 x 2000
//! walls = true               # walls around the edges (default true)
//! floor = "white"            # the mat's colour where nothing is drawn
//! ambient = 10               # COL-AMBIENT, percent
//!
//! [[obstacles]]              # boxes and walls: [x, y, width, height]
//! rect = [700, 0, 20, 600]
//!
//! [[mat]]                    # drawn on the floor, later on top: one of
//! colour = "black"           # black blue green yellow red white brown
//! line = [[100, 100], [500, 100], [500, 400]]   # tape, `width` wide (20)
//! width = 20
//! closed = false             # join the last point to the first
//! # rect = [x, y, w, h]  or  circle = [x, y, radius]; reflect = 40 overrides
//!
//! [drive]                    # the robot
//! left = "outB"              # motor of the left wheel
//! right = "outC"
//! wheel_diameter = 56
//! axle_track = 112
//! start = [200, 300, 0]      # x, y, heading
//! body = { front = 80, back = 60, width = 120 }   # footprint around the axle
//! drag = [0.3, 0]            # friction on the left, right wheel (default 0)
//!
//! [sensors.in1]              # where a sensor sits: default the axle centre
//! at = [90, 0]               # a touch sensor's tip; a colour sensor's spot
//! look = 0                   # ultrasonic/IR: degrees left of straight ahead
//! # drift = 0.5              # a gyro's drift, degrees per second
//!
//! [arms.outA]                # a motor with end stops (degrees from start)
//! stops = [-200, 300]
//! ```
//!
//! Unknown fields, ports, drivers or colours are errors that name the line
//! and the field. The built-in worlds ([`WorldSpec::builtin_names`]):
//! `bumper` (a tank and a wall), `line` (an oval line-following track),
//! `sorter` (a tank over coloured patches, an arm to sort), `arm` (a
//! medium motor arm with end stops), `empty` (a tank on an empty table
//! with every kind of sensor).

mod control;
mod geometry;
mod live;
mod mat;
mod report;
mod sensors;
mod spec;

pub use control::{control_line, control_words, WorldControl};
pub use geometry::{Pose, Rect, Vec2};
pub use live::LiveWorld;
pub use mat::{Colour, Shape};
pub use report::WorldReport;
pub use spec::WorldSpec;

#[cfg(test)]
mod tests;
