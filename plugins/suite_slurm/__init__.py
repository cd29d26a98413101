"""SLURM executor for dlsys-suite through submitit (skeleton: being built)."""
