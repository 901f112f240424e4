//! Packet capture options (`--pcap`): checked like a part of the scenario.

use super::*;

/// Packet captures of a run (`bondsim run --pcap DIR`, `bondsim.run(..., pcap=...)`): not a
/// part of the scenario (they observe a run and change none of its figures), but checked
/// like one, its errors naming `pcap.<field>`. What each file holds: [`crate::capture`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaptureOptions {
    /// Directory the pcapng files go to (created if missing; files of the same names are replaced).
    pub dir: std::path::PathBuf,
    /// Write whole frames, the payload as zero bytes; by default only the headers are
    /// written (each frame's original length is recorded either way).
    #[serde(default)]
    pub payload: bool,
    /// Most frames one file takes; later frames are left out of it.
    #[serde(default)]
    pub max_packets: Option<u64>,
    /// Frames before this simulated time, in seconds, are left out.
    #[serde(default)]
    pub start_s: f64,
    /// Frames from this simulated time on, in seconds, are left out.
    #[serde(default)]
    pub stop_s: Option<f64>,
}

impl CaptureOptions {
    /// Parses and checks capture options given as JSON (errors name `pcap.<field>`).
    pub fn from_json(text: &str) -> Result<CaptureOptions> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let options: CaptureOptions = serde_path_to_error::deserialize(de).map_err(|err| {
            let path = dotted(err.path());
            let mut message = err.into_inner().to_string();
            if let Some(cut) = message.rfind(" at line ") {
                message.truncate(cut);
            }
            Error::scenario(if path.is_empty() { "pcap".to_string() } else { format!("pcap.{path}") }, message)
        })?;
        options.validate()?;
        Ok(options)
    }

    /// Checks the fields.
    pub fn validate(&self) -> Result<()> {
        if self.dir.as_os_str().is_empty() {
            return Err(Error::scenario("pcap.dir", "must name a directory"));
        }
        if let Some(n) = self.max_packets {
            at_least("pcap.max_packets", n, 1)?;
        }
        duration("pcap.start_s", self.start_s, 1.0, true)?;
        if let Some(stop) = self.stop_s {
            duration("pcap.stop_s", stop, 1.0, false)?;
            if stop <= self.start_s {
                return Err(Error::scenario(
                    "pcap.stop_s",
                    format!("must be after pcap.start_s = {}, got {}", num(self.start_s), num(stop)),
                ));
            }
        }
        Ok(())
    }
}
