"""Whether and what to send (pure): compare, plan, guards, plan ids, the snapshot ahead."""
