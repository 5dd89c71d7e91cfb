"""Run statistics for notebooks and reports: read what the stages wrote, recompute nothing."""
