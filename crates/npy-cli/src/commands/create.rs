//! `npy create`: a preallocated, zero-filled file.

use anyhow::Context;
use npy_core::{DType, Order};
use npy_mmap::CreateOptions;

use crate::cli::{CreateArgs, OrderArg};

pub fn run(args: &CreateArgs) -> anyhow::Result<()> {
    let dtype = DType::parse(&args.dtype)
        .with_context(|| format!("--dtype {:?} is not a descr numpy writes", args.dtype))?;
    let order = match args.order {
        OrderArg::C => Order::C,
        OrderArg::F => Order::Fortran,
    };
    let result = CreateOptions::new(dtype, args.shape.0.clone())
        .order(order)
        .reserve(args.reserve)
        .overwrite(args.force)
        .preallocate(&args.output);
    match result {
        Ok(_) => Ok(()),
        Err(err) if matches!(err.kind(), npy_mmap::ErrorKind::AlreadyExists) => {
            Err(crate::output::exists_error(&args.output))
        }
        Err(err) => Err(err.into()),
    }
}
