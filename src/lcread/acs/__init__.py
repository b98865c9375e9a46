"""acs: fold reading with Answer-Convergence Stopping (seed 000); see README.md in this folder."""
