//! Prints the lines of a GC log that the parser does not understand (a development aid):
//! `cargo run --release -p cqlbench-gclog --example unparsed -- gc.log`.

use std::io::BufRead;

fn main() -> std::io::Result<()> {
    for path in std::env::args().skip(1) {
        let reader = std::io::BufReader::new(std::fs::File::open(&path)?);
        for line in reader.split(b'\n') {
            let line = line?;
            if cqlbench_gclog::parse_line(&line).is_none() {
                println!("{path}: {}", String::from_utf8_lossy(&line));
            }
        }
    }
    Ok(())
}
