//! [`DataLog`]: a CSV file of timestamped rows, cheap enough for a 100 Hz
//! control loop (as Pybricks' `DataLog`): after the first row, a row
//! allocates nothing; integers are formatted into a buffer kept by the log
//! and reach the file in one `write` per [`DataLog::FLUSH_BYTES`] (and at
//! [`DataLog::flush`] / drop).
//!
//! ```
//! use ev3sysfs::datalog::DataLog;
//! # let dir = std::env::temp_dir().join(format!("datalog-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! let mut log = DataLog::create(dir.join("run.csv"), &["left", "right"])?;
//! for i in 0..3 {
//!     log.row(&[i * 10, -i])?;
//! }
//! log.flush()?;
//! let text = std::fs::read_to_string(dir.join("run.csv"))?;
//! assert!(text.starts_with("time_ms,left,right\n"));
//! assert_eq!(text.lines().count(), 4);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::clock::Instant;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Operation, Result};

/// A CSV log: a header line, then one line per [`DataLog::row`], each
/// starting with the milliseconds since the log was created.
#[derive(Debug)]
pub struct DataLog {
    file: File,
    path: PathBuf,
    buffer: Vec<u8>,
    columns: usize,
    start: Instant,
}

impl DataLog {
    /// Bytes buffered before they are written (one `write` each time).
    pub const FLUSH_BYTES: usize = 4096;

    /// Creates (or truncates) `path` and writes the header: `time_ms`,
    /// then `columns`.
    ///
    /// # Errors
    /// [`Error::Io`] (or another mapped error) when the file cannot be
    /// created or written.
    pub fn create(path: impl AsRef<Path>, columns: &[&str]) -> Result<DataLog> {
        let path = path.as_ref().to_path_buf();
        let file =
            File::create(&path).map_err(|e| Error::from_io(&path, Operation::Open, None, e))?;
        let mut buffer = Vec::with_capacity(Self::FLUSH_BYTES + 256);
        buffer.extend_from_slice(b"time_ms");
        for c in columns {
            buffer.push(b',');
            buffer.extend_from_slice(c.as_bytes());
        }
        buffer.push(b'\n');
        let mut log = DataLog {
            file,
            path,
            buffer,
            columns: columns.len(),
            start: Instant::now(),
        };
        log.flush()?;
        Ok(log)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one row: the time since creation in ms, then `values`.
    /// Allocates nothing once the buffer is at its size (the first row).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when `values` has not one value per column
    /// (nothing is logged); write errors when the buffer is flushed.
    pub fn row(&mut self, values: &[i64]) -> Result<()> {
        if values.len() != self.columns {
            return Err(Error::OutOfRange {
                attribute: "DataLog::row values (one per column)",
                value: i64::try_from(values.len()).unwrap_or(i64::MAX),
                min: i64::try_from(self.columns).unwrap_or(i64::MAX),
                max: i64::try_from(self.columns).unwrap_or(i64::MAX),
            });
        }
        let ms = i64::try_from(self.start.elapsed().as_millis()).unwrap_or(i64::MAX);
        push_int(&mut self.buffer, ms);
        for v in values {
            self.buffer.push(b',');
            push_int(&mut self.buffer, *v);
        }
        self.buffer.push(b'\n');
        if self.buffer.len() >= Self::FLUSH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes what is buffered to the file.
    ///
    /// # Errors
    /// Write errors.
    pub fn flush(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let result = self.file.write_all(&self.buffer);
        self.buffer.clear();
        result.map_err(|e| Error::from_io(&self.path, Operation::Write, None, e))
    }
}

impl Drop for DataLog {
    fn drop(&mut self) {
        if let Err(e) = self.flush() {
            log::warn!("{e}");
        }
    }
}

/// Appends `v` in decimal (no allocation, no formatter).
fn push_int(out: &mut Vec<u8>, v: i64) {
    let mut digits = [0u8; 20];
    let mut n = v.unsigned_abs();
    let mut i = digits.len();
    loop {
        i -= 1;
        // n % 10 < 10: the cast cannot truncate.
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        for v in [0, 7, -7, 10, 1234567, i64::MIN, i64::MAX] {
            let mut out = Vec::new();
            push_int(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), v.to_string());
        }
    }
}
