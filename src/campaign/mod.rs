//! The load-balance campaign (paper section 4.2, Algorithm 1).
