//! [`Playground`]: a brick's devices, or a simulated brick.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::sim::{RealtimeSim, Simulator};
use super::MockTree;
use crate::error::Result;

/// Where a program's devices are: the brick's sysfs, or a simulated brick.
/// Keep it alive as long as the devices are used.
#[derive(Debug)]
pub struct Playground {
    root: PathBuf,
    simulated: Option<(Arc<MockTree>, RealtimeSim)>,
}

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
        if !crate::discover::list(&root, needs)?.is_empty() {
            return Ok(Playground {
                root,
                simulated: None,
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
        })
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
