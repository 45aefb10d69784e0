//! The brick's buttons, beeper and screen: a small menu. Up and down move a
//! cursor (with a click of the beeper), enter plays the chosen note, back
//! quits. The screen is redrawn after each press, with one write. Off the brick (no `/dev/input/by-path/platform-gpio_keys-event`
//! under `$EV3SYSFS_DEV` or `/dev`) it mounts the simulated brick's devices
//! (feature `sim`, needs FUSE), presses their buttons from a script, and
//! prints the tones it heard and the screen it saw.
//!
//!     cargo run --example brick_io

use std::path::Path;
use std::time::Duration;

use ev3sysfs::buttons::{Action, Button, Buttons, BUTTONS_DEVICE};
use ev3sysfs::screen::{Color, Screen, FRAMEBUFFER_DEVICE, FRAMEBUFFER_SYSFS};
use ev3sysfs::sound::{Beeper, BEEPER_DEVICE};

const NOTES: [(&str, u32); 4] = [("C5", 523), ("E5", 659), ("G5", 784), ("C6", 1047)];

fn draw(screen: &mut Screen, chosen: usize, status: &str) -> ev3sysfs::Result<()> {
    screen.clear(Color::White);
    screen.rect(0, 0, screen.width(), screen.height(), Color::Black);
    screen.text(6, 4, "ev3sysfs: brick I/O", Color::Black);
    screen.line(1, 13, screen.width() - 2, 13, Color::Black);
    for (i, (name, hz)) in NOTES.iter().enumerate() {
        let y = 20 + 12 * i as i32;
        if i == chosen {
            screen.fill_rect(4, y - 2, 100, 11, Color::Black);
            screen.text(8, y, &format!("> {name} {hz} Hz"), Color::White);
        } else {
            screen.text(8, y, &format!("  {name} {hz} Hz"), Color::Black);
        }
    }
    screen.text(6, 112, status, Color::Black);
    screen.show() // one pwrite of the whole image
}

/// The menu: runs until back is pressed (or nothing happens for a minute).
/// It reads button events, which queue up while it beeps or draws, so no
/// short press is lost.
fn menu(buttons: &Buttons, beeper: &Beeper, screen: &mut Screen) -> ev3sysfs::Result<()> {
    if buttons.is_pressed(Button::Backspace)? {
        return Ok(()); // back held at start: one ioctl says so
    }
    let mut chosen = 0;
    draw(screen, chosen, "up/down, enter, back")?;
    beeper.beep()?;
    while let Some(event) = buttons.next_event(Some(Duration::from_secs(60)))? {
        if event.action != Action::Pressed {
            continue;
        }
        match event.button {
            Button::Up | Button::Left => chosen = chosen.saturating_sub(1),
            Button::Down | Button::Right => chosen = (chosen + 1).min(NOTES.len() - 1),
            Button::Enter => beeper.tone(NOTES[chosen].1, Duration::from_millis(300))?,
            Button::Backspace => {
                draw(screen, chosen, "bye")?;
                return beeper.tone(262, Duration::from_millis(150));
            }
        }
        if event.button != Button::Enter {
            beeper.tone(2000, Duration::from_millis(10))?;
        }
        draw(screen, chosen, &format!("{} pressed", event.button))?;
    }
    Ok(())
}

/// The same code for the brick and the simulated brick: only the two roots
/// differ.
fn run(dev: &Path, class_root: &Path, script: impl FnOnce() + Send) -> ev3sysfs::Result<()> {
    let buttons = Buttons::open(dev.join(BUTTONS_DEVICE))?;
    let beeper = Beeper::open(dev.join(BEEPER_DEVICE))?;
    let mut screen = Screen::open(
        dev.join(FRAMEBUFFER_DEVICE),
        class_root.join(FRAMEBUFFER_SYSFS),
    )?;
    std::thread::scope(|s| {
        s.spawn(script);
        menu(&buttons, &beeper, &mut screen)
    })
}

fn main() -> ev3sysfs::Result<()> {
    let dev = ev3sysfs::input::default_dev_root();
    if dev.join(BUTTONS_DEVICE).exists() {
        println!("on the brick: use its buttons, back quits");
        return run(&dev, &ev3sysfs::default_root(), || ());
    }
    simulated(&dev)
}

fn simulated(dev: &Path) -> ev3sysfs::Result<()> {
    use ev3sysfs::screen::Geometry;
    use ev3sysfs_sim::MockTree;

    let tree = match MockTree::ev3() {
        Ok(tree) => tree,
        Err(e) => {
            println!(
                "no buttons under {}, and no simulated brick: {e}",
                dev.display()
            );
            return Ok(());
        }
    };
    let sim = tree.add_brick_io(Geometry::EV3_MONO)?;
    println!(
        "not a brick: simulated devices at {}, classes at {}",
        sim.dev_root().display(),
        tree.root().display()
    );
    // A user's fingers, faster than the menu: the events queue up.
    let fingers = || {
        for button in [Button::Down, Button::Down, Button::Enter, Button::Up] {
            sim.click(button);
        }
        sim.click(Button::Backspace);
    };
    run(sim.dev_root(), tree.root(), fingers)?;
    let heard: Vec<u32> = sim
        .tones()
        .iter()
        .map(|t| t.hz)
        .filter(|&hz| hz != 0)
        .collect();
    println!("tones played (Hz): {heard:?}");
    let mut seen = sim.open_screen()?;
    seen.load()?;
    println!("the screen:\n{}", seen.to_ascii());
    Ok(())
}
