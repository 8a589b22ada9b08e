"""Which machine: throughput and price per workload, machine against machine (its view and
template)."""
