//! Graph partitioning for hxsim (see README).
