//! [`Playground`]: a brick's devices, or a simulated brick.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::sim::{RealtimeSim, Simulator};
use super::world::{WorldReport, WorldSpec};
use super::MockTree;
use crate::error::Result;

/// Where a program's devices are: the brick's sysfs, or a simulated brick.
/// Keep it alive as long as the devices are used.
#[derive(Debug)]
pub struct Playground {
    root: PathBuf,
    simulated: Option<(Arc<MockTree>, RealtimeSim)>,
    /// Says what happened in the world on drop.
    report: bool,
}

/// The report of the last world a [`Playground`] dropped.
static LAST_REPORT: Mutex<Option<WorldReport>> = Mutex::new(None);

impl Playground {
    /// Uses the real tree ([`crate::default_root`]) when it has a device of
    /// class `needs` (e.g. `tacho-motor`); otherwise builds a simulated
    /// brick: [`MockTree::ev3`], then `build` adds devices, and a real-time
    /// [`Simulator`] runs it. Examples use this to run anywhere.
    ///
    /// # Errors
    /// Errors creating the tree, from `build`, or starting the simulator.
    pub fn brick_or_simulated(
        needs: &str,
        build: impl FnOnce(&MockTree) -> Result<()>,
    ) -> Result<Playground> {
        Playground::at_or_simulated(crate::default_root(), needs, build)
    }

    /// As [`Playground::brick_or_simulated`], looking under `root`.
    ///
    /// # Errors
    /// As [`Playground::brick_or_simulated`].
    pub fn at_or_simulated(
        root: impl Into<PathBuf>,
        needs: &str,
        build: impl FnOnce(&MockTree) -> Result<()>,
    ) -> Result<Playground> {
        let root = root.into();
        if has_devices(&root, needs)? {
            return Ok(Playground {
                root,
                simulated: None,
                report: false,
            });
        }
        log::info!("no {needs} under {}: simulating a brick", root.display());
        Playground::simulated(build)
    }

    /// A simulated brick, whatever is plugged in here.
    ///
    /// # Errors
    /// Errors creating the tree, from `build`, or starting the simulator.
    pub fn simulated(build: impl FnOnce(&MockTree) -> Result<()>) -> Result<Playground> {
        let tree = Arc::new(MockTree::ev3()?);
        build(&tree)?;
        let sim = Simulator::new(Arc::clone(&tree))?.run_realtime();
        Ok(Playground {
            root: tree.root().to_path_buf(),
            simulated: Some((tree, sim)),
            report: false,
        })
    }

    /// The brick's devices ([`crate::default_root`]) when it has a tacho
    /// motor or a sensor; otherwise `world` (a built-in world's name or a
    /// world file, see [`crate::world`]) on a simulated brick in real
    /// time. Then it says so in one line, and on drop says what happened
    /// (e.g. `world bumper: robot drove 515 mm and stopped 0 mm from the
    /// wall after 2.0 s`). Robot examples start with this line.
    ///
    /// # Errors
    /// A bad world, errors mounting the simulated brick.
    pub fn brick_or_world(world: &str) -> Result<Playground> {
        let root = crate::default_root();
        for class in ["tacho-motor", "lego-sensor"] {
            if has_devices(&root, class)? {
                return Playground::at_or_simulated(root, class, |_| Ok(()));
            }
        }
        let mut place = Playground::world(world)?;
        place.report = true;
        println!(
            "(no brick here: world {world:?} simulated under {})",
            place.root().display()
        );
        Ok(place)
    }

    /// World `world` (built-in name or file) on a simulated brick, in real
    /// time.
    ///
    /// # Errors
    /// A bad world, errors mounting the simulated brick.
    pub fn world(world: &str) -> Result<Playground> {
        let spec = WorldSpec::load(world)?;
        let tree = Arc::new(MockTree::ev3()?);
        let mut sim = Simulator::new(Arc::clone(&tree))?;
        sim.add_world(&spec)?;
        Ok(Playground {
            root: tree.root().to_path_buf(),
            simulated: Some((tree, sim.run_realtime())),
            report: false,
        })
    }

    /// What happened in the world so far, when there is one.
    pub fn report(&self) -> Option<WorldReport> {
        let (_, sim) = self.simulated.as_ref()?;
        sim.with(|s| s.world().map(super::LiveWorld::report))
    }

    /// The report of the last world a playground made by
    /// [`Playground::brick_or_world`] dropped (for tests of examples).
    pub fn last_report() -> Option<WorldReport> {
        LAST_REPORT
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The class root to find devices under.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `true` when the devices are simulated.
    pub fn is_simulated(&self) -> bool {
        self.simulated.is_some()
    }

    /// The simulator, when simulated (to script sensors, block motors).
    pub fn simulator(&self) -> Option<&RealtimeSim> {
        self.simulated.as_ref().map(|(_, sim)| sim)
    }

    /// The simulated brick, when simulated.
    pub fn tree(&self) -> Option<&Arc<MockTree>> {
        self.simulated.as_ref().map(|(tree, _)| tree)
    }
}

impl Drop for Playground {
    fn drop(&mut self) {
        if !self.report {
            return;
        }
        if let Some(report) = self.report() {
            println!("({report})");
            *LAST_REPORT.lock().unwrap_or_else(|p| p.into_inner()) = Some(report);
        }
    }
}

/// `true` when class `class` under `root` has a device: one read of the
/// class directory, no attribute opened (the program's own discovery reads
/// those; a robot program's start-up pays for one scan of the class here).
///
/// # Errors
/// [`ev3sysfs::Error::InvalidName`] for a bad class name.
fn has_devices(root: &Path, class: &str) -> Result<bool> {
    crate::validate_name(class)?;
    Ok(std::fs::read_dir(root.join(class)).is_ok_and(|mut entries| entries.next().is_some()))
}
