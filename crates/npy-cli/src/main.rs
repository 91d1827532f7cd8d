//! The `npy` command-line tool.

fn main() {
    println!("npy: not yet implemented");
}
