"""Element families: planar and spatial joints, drivers, user constraints."""
