"""Integration tier on a real Spark standalone cluster (a master and two workers on loopback)."""
