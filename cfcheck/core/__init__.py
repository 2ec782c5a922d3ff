"""The engine's leaf parts, which import nothing else of cfcheck's: score records, bars, the
persistent generation cache and its one atomic write, sharding, xdist groups and thread settings."""
