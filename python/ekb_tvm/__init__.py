"""ekb's bridge to Apache TVM: the loop IR as TensorIR, built by TVM (docs/TVM.md)."""
