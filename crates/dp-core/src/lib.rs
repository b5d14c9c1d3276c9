//! placeholder: being built
