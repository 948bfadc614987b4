//! Reading what a coupled run measured: LUCIA and the other timing formats.
